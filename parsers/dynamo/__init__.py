"""NVIDIA Dynamo's tool-call and reasoning parsers, which run inside its Rust OpenAI frontend.

Dynamo has no Python parse API: the adapter starts the frontend with a replaying worker in a
subprocess bound to 127.0.0.1 and grades over its HTTP API (see `serving.py`). Importable without
Dynamo: `load()` imports the engine and raises ImportError where it is absent, which makes every
Dynamo cell `skip`. Install with `nox -s "grade(engine='dynamo')"`.
"""

from __future__ import annotations

from parsers import Engine, Pipeline, mapping

ENGINE = "dynamo"
SURFACES = ("chat", "responses")  # `/v1/responses` too, on the same frontend (`serving.Frontend.respond`)

# parser under test -> (family, tool_call_parser, reasoning_parser), as a worker registers its model
# (ModelRuntimeConfig). Parser generation: Dynamo's default (DYN_PARSER_VERSION unset, i.e. auto), which
# serves the v1 parsers where the pair has one and the unified v2 parser otherwise. v1 only: hermes, the
# three DeepSeek V3 pairs, minimax_m2 (both), mistral (both), llama3_json, pythonic, phi4, jamba; v2 only
# (no v1 pair): glm45, glm47, kimi_k2, kimi_k25; both (auto picks v1): qwen3_coder, gemma4, deepseek_v4.
# The names not graded, each with why: coverage.toml beside this file.
PIPELINES: dict[str, Pipeline] = {
    "hermes": Pipeline("hermes", tool="hermes", reasoning="qwen3"),
    "kimi_k2": Pipeline("kimi_k2", tool="kimi_k2", reasoning="kimi_k2"),
    "kimi_k25": Pipeline("kimi_k2", tool="kimi_k25", reasoning="kimi_k25"),
    "qwen3_coder": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="qwen3"),
    "deepseek_v3": Pipeline("deepseek_v3", tool="deepseek_v3", reasoning="deepseek_v3"),
    "deepseek_v3_1": Pipeline("deepseek_v3_1", tool="deepseek_v3_1", reasoning="deepseek_v3_1"),
    "deepseek_v3_2": Pipeline("deepseek_v3_2", tool="deepseek_v3_2", reasoning="deepseek_v3_2"),
    "deepseek_v4": Pipeline("deepseek_v4", tool="deepseek_v4", reasoning="deepseek_v4"),
    "deepseek_v41": Pipeline("deepseek_v4_1", tool="deepseek_v41", reasoning="deepseek_v41"),
    "glm45": Pipeline("glm45", tool="glm45", reasoning="glm45"),
    "glm47": Pipeline("glm47", tool="glm47", reasoning="glm47"),
    "minimax_m2": Pipeline("minimax_m2", tool="minimax_m2", reasoning="minimax_m2"),
    "minimax_append_think": Pipeline(
        "minimax_m2", tool="minimax_m2", reasoning="minimax_append_think", reasoning_in_content=True),
    "minimax_m3": Pipeline("minimax_m3", tool="minimax_m3", reasoning="minimax_m3"),
    "mistral": Pipeline("mistral", tool="mistral", reasoning="mistral"),
    "mistral_pre_v11": Pipeline("mistral_pre_v11", tool="mistral"),
    "llama3_json": Pipeline("llama3_json", tool="llama3_json"),
    "pythonic": Pipeline("pythonic", tool="pythonic"),
    "phi4": Pipeline("phi4_mini", tool="phi4"),
    "jamba": Pipeline("jamba", tool="jamba"),
    "gemma4": Pipeline("gemma4", tool="gemma4", reasoning="gemma4"),
    # reasoning parsers Dynamo registers with no tool parser for their format: served alone
    "granite": Pipeline("granite", reasoning="granite"),
    "step3": Pipeline("step3", reasoning="step3"),
    "kimi": Pipeline("kimi_vl_think", reasoning="kimi"),  # Kimi-VL-Thinking's ◁think▷…◁/think▷; no tool format
    # DeepSeek-R1's reasoning parser (thinking always on) beside DeepSeek V3's tool parser (issue 23)
    "deepseek_r1": Pipeline("deepseek_v3", tool="deepseek_v3", reasoning="deepseek_r1"),
    # more names on formats that are families already (issue 23). Tool name `qwen3` is only the parsers-v2 unified
    # Qwen3 family (Qwen3-Coder XML), routed to only with DYN_PARSER_VERSION=2 and a reasoning parser of the same
    # family (qwen3); on the default generation no v1 tool parser has that name and no call is extracted
    "qwen3": Pipeline("qwen3_coder", tool="qwen3", reasoning="qwen3"),
    # Nemotron 3 reasoning names: <think> with thinking always on; nemotron_v3 / nemotron3 also leave reasoning at
    # a <tool_call>
    "nemotron_v3": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="nemotron_v3"),
    "nemotron3": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="nemotron3"),
    "nemotron_nano": Pipeline("qwen3_coder", tool="nemotron_nano", reasoning="nemotron_nano"),
    # two more reasoning names beside the tool parsers they serve with: `basic` (plain <think>, Hermes/Qwen) and the
    # reasoning parser named after Qwen3-Coder
    # `default`, the tool parser a model gets when none is named: JSON after <|python_tag|> (or in <TOOLCALL>)
    "default": Pipeline("llama3_json", tool="default"),
    # gpt-oss: the frontend decodes the o200k_harmony ids with the family's tokenizer.json like any other
    "harmony": Pipeline("harmony", tool="harmony", reasoning="gpt_oss"),
    "basic": Pipeline("hermes", tool="hermes", reasoning="basic"),
    "qwen3_coder-think": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="qwen3_coder"),
    "muse": Pipeline("muse", tool="muse", reasoning="muse"),
    "muse_glimmer": Pipeline("muse", tool="muse_glimmer", reasoning="muse_glimmer"),
    # kimi-k3 is the same implementation under the other separator
    "kimi_k3": Pipeline("kimi_k3_xtml", tool="kimi_k3", reasoning="kimi_k3"),
    "inkling": Pipeline("inkling", tool="inkling", reasoning="inkling"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports dynamo (the Rust frontend's bindings): ImportError when absent

    return load_engine(ENGINE, PIPELINES)
