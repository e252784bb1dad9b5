"""lmdeploy's response parser (its tool and reasoning parsers), driven through the code path of its OpenAI
chat server.

Importable without lmdeploy: `load()` imports the engine and raises ImportError where it is absent,
which makes every lmdeploy cell `skip`. Install with `nox -s "grade(engine='lmdeploy')"`.
"""

from __future__ import annotations

from parsers import Engine, Pipeline, mapping

ENGINE = "lmdeploy"

# parser under test -> (family, --tool-call-parser, --reasoning-parser), as a server would be started.
# `default` is lmdeploy's one `<think>` reasoning parser (the legacy names qwen-qwq, intern-s1 and
# deepseek-r1 are mapped to it at start-up); the DeepSeek ones differ only in when reasoning starts.
PIPELINES: dict[str, Pipeline] = {
    "qwen3": Pipeline("hermes", tool="qwen3", reasoning="default"),  # `qwen`, `qwen2d5`: the same class
    "qwen3coder": Pipeline("qwen3_coder", tool="qwen3coder", reasoning="default"),
    # InternS2-preview writes Qwen3-Coder's XML (a subclass that only changes request rendering)
    "interns2-preview": Pipeline("qwen3_coder", tool="interns2-preview", reasoning="default"),
    "kimi_k2": Pipeline("kimi_k2", tool="kimi_k2", reasoning="default"),
    "deepseek-v32": Pipeline("deepseek_v3_2", tool="deepseek-v32", reasoning="deepseek-v32"),
    "deepseek-v4": Pipeline("deepseek_v4", tool="deepseek-v4", reasoning="deepseek-v4"),
    "glm47": Pipeline("glm47", tool="glm47", reasoning="default"),
    "llama3": Pipeline("llama3_json", tool="llama3"),
    # Intern-S1's guide: --tool-call-parser intern-s1 --reasoning-parser intern-s1 (legacy name of `default`);
    # `internlm` is the same class
    "intern-s1": Pipeline("internlm2", tool="intern-s1", reasoning="default"),
    # lmdeploy has no DeepSeek V3 tool parser: its `deepseek-v3` reasoning parser is served alone, and cells
    # whose output holds a call are n/a for it (calls stay text)
    "deepseek-v3": Pipeline("deepseek_v3", reasoning="deepseek-v3"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports lmdeploy (and torch): ImportError when not installed

    return load_engine(ENGINE, PIPELINES)
