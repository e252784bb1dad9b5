"""vLLM's tool and reasoning parsers, driven through the code path of its OpenAI chat server.

Importable without vLLM: `load()` imports the engine and raises ImportError where it is absent,
which makes every vLLM cell `skip`. Install with `nox -s "grade(engine='vllm')"`.
"""

from __future__ import annotations

from contract.adapter import Engine
from contract.pipeline import Pipeline, mapping

ENGINE = "vllm"

# parser under test -> (family, --tool-call-parser, --reasoning-parser), as a server would be started
PIPELINES: dict[str, Pipeline] = {
    "hermes": Pipeline("hermes", tool="hermes", reasoning="qwen3"),
    "kimi_k2": Pipeline("kimi_k2", tool="kimi_k2", reasoning="kimi_k2"),
    "qwen3_coder": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="qwen3"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports vllm (and torch): ImportError when not installed

    return load_engine(ENGINE, PIPELINES)
