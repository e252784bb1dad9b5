"""vllm-mlx's tool and reasoning parsers, driven through its OpenAI chat server in-process (no MLX model).

Importable without vllm-mlx: `load()` imports the engine (its server needs `mlx-cpu` on Linux) and raises
ImportError where it is absent, which makes every vllm-mlx cell `skip`. Install with
`nox -s "grade(engine='vllm-mlx')"`.
"""

from __future__ import annotations

from parsers import Engine, Pipeline, mapping

ENGINE = "vllm-mlx"
SURFACES = ("chat", "responses")  # `/v1/responses` too: `responses.py`

# parser under test -> (family, --tool-call-parser, --reasoning-parser), as `vllm-mlx serve
# --enable-auto-tool-choice` would be started. vllm-mlx has no Kimi, MiniMax or Granite reasoning parser:
# those pair with the generic think-tag parsers (qwen3: no tags = content; deepseek_r1: a lone closer
# still ends reasoning, for MiniMax's prefilled `<think>`) or with none.
PIPELINES: dict[str, Pipeline] = {
    "hermes": Pipeline("hermes", tool="hermes", reasoning="qwen3"),
    "qwen": Pipeline("hermes", tool="qwen", reasoning="qwen3"),
    "qwen3_coder": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="qwen3"),
    "nemotron": Pipeline("qwen3_coder", tool="nemotron", reasoning="qwen3"),  # Nemotron-3-Nano: §2 markup
    "step3p5": Pipeline("qwen3_coder", tool="step3p5", reasoning="step3p5"),  # Step-3.5: the same XML markup
    "kimi_k2": Pipeline("kimi_k2", tool="kimi_k2", reasoning="qwen3"),
    "deepseek_v3": Pipeline("deepseek_v3", tool="deepseek_v3", reasoning="deepseek_r1"),
    "deepseek_v4": Pipeline("deepseek_v4", tool="deepseek_v4", reasoning="deepseek_v4"),
    "glm47": Pipeline("glm47", tool="glm47", reasoning="glm4"),
    "glm4": Pipeline("glm45", tool="glm4", reasoning="glm4"),  # the same class as glm47, on GLM-4.5's spacing
    "minimax_m2": Pipeline("minimax_m2", tool="minimax_m2", reasoning="deepseek_r1"),
    "mistral": Pipeline("mistral", tool="mistral", reasoning="mistral"),
    "mistral_pre_v11": Pipeline("mistral_pre_v11", tool="mistral"),
    "llama3": Pipeline("llama3_json", tool="llama3"),
    "granite": Pipeline("granite", tool="granite"),
    "xlam": Pipeline("xlam_json", tool="xlam"),
    "gemma4": Pipeline("gemma4", tool="gemma4", reasoning="gemma4"),
    # gpt-oss: two text parsers of Harmony channels each (the tool names are aliases of one class)
    "harmony": Pipeline("harmony", tool="harmony", reasoning="harmony"),
    "gpt-oss": Pipeline("harmony", tool="gpt-oss", reasoning="gpt_oss"),
    "poolside_v1": Pipeline("laguna", tool="poolside_v1", reasoning="poolside_v1"),  # a Glm47ToolParser subclass, for Laguna
    # `auto` (alias `generic`), the parser vllm-mlx serves when none is named, detects the format from the text:
    # graded on the families it claims to read that models serve most, with each family's reasoning parser
    "auto-hermes": Pipeline("hermes", tool="auto", reasoning="qwen3"),
    "auto-qwen3_coder": Pipeline("qwen3_coder", tool="auto", reasoning="qwen3"),
    "auto-glm47": Pipeline("glm47", tool="auto", reasoning="glm4"),
    "auto-gemma4": Pipeline("gemma4", tool="auto", reasoning="gemma4"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports vllm_mlx and mlx: ImportError when not installed

    return load_engine(ENGINE, PIPELINES)
