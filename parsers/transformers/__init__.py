"""Hugging Face transformers' own response parsing (`transformers serve`), graded per model type.

transformers has no tool- or reasoning-parser registry: `transformers serve` picks a declarative response
template by the model's `config.model_type` (its built-in fallbacks), and that one template splits
reasoning, content and tool calls. A pipeline here names that model type as both its tool and its
reasoning "parser". Importable without transformers: `load()` raises ImportError where it is absent.
"""

from __future__ import annotations

from parsers import Engine, Pipeline, mapping

ENGINE = "transformers"
SURFACES = ("chat", "responses")  # `/v1/responses` too: `responses.py`

# parser under test -> (family, model type whose response template `transformers serve` uses)
PIPELINES: dict[str, Pipeline] = {
    "qwen3": Pipeline("hermes", tool="qwen3", reasoning="qwen3"),  # Qwen2/2.5/3: <tool_call>{json}</tool_call>
    "qwen3_5": Pipeline("qwen3_coder", tool="qwen3_5", reasoning="qwen3_5"),  # Qwen3.5: <function=…> inside
    "gemma4": Pipeline("gemma4", tool="gemma4", reasoning="gemma4"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports transformers: ImportError when not installed

    return load_engine(ENGINE, PIPELINES)
