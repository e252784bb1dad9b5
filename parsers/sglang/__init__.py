"""SGLang's function-call and reasoning parsers, composed as its OpenAI chat server composes them.

Importable without SGLang: `load()` imports the engine and raises ImportError where it is absent,
which makes every SGLang cell `skip`. Install with `nox -s "grade(engine='sglang')"`.
"""

from __future__ import annotations

from parsers import Engine, Pipeline, mapping

ENGINE = "sglang"

# parser under test -> (family, --tool-call-parser, --reasoning-parser), as a server would be started
# The names not graded, each with why: coverage.toml beside this file.
PIPELINES: dict[str, Pipeline] = {
    "hermes": Pipeline("hermes", tool="hermes", reasoning="qwen3"),
    "qwen25": Pipeline("hermes", tool="qwen25", reasoning="qwen3"),
    "kimi_k2": Pipeline("kimi_k2", tool="kimi_k2", reasoning="kimi_k2"),
    "qwen3_coder": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="qwen3"),
    # DeepSeek: the thinking-aware `deepseek-v3` reasoning parser (deepseek-r1 always forces reasoning).
    "deepseekv3": Pipeline("deepseek_v3", tool="deepseekv3", reasoning="deepseek-v3"),
    "deepseekv31": Pipeline("deepseek_v3_1", tool="deepseekv31", reasoning="deepseek-v3"),
    "deepseekv32": Pipeline("deepseek_v3_2", tool="deepseekv32", reasoning="deepseek-v3"),
    "glm45": Pipeline("glm45", tool="glm45", reasoning="glm45"),
    "glm47": Pipeline("glm47", tool="glm47", reasoning="glm45"),  # SGLang has no glm47 reasoning parser
    "minimax-m2": Pipeline("minimax_m2", tool="minimax-m2", reasoning="minimax"),
    "minimax-append-think": Pipeline(
        "minimax_m2", tool="minimax-m2", reasoning="minimax-append-think", reasoning_in_content=True),
    "minimax-m3": Pipeline("minimax_m3", tool="minimax-m3", reasoning="minimax-m3"),
    "step3": Pipeline("step3", tool="step3", reasoning="step3"),
    "mistral": Pipeline("mistral", tool="mistral", reasoning="mistral"),
    "mistral_pre_v11": Pipeline("mistral_pre_v11", tool="mistral"),
    "llama3": Pipeline("llama3_json", tool="llama3"),
    "pythonic": Pipeline("pythonic", tool="pythonic"),
    "lfm2": Pipeline("lfm2_pythonic", tool="lfm2"),  # no LFM2 reasoning parser is registered
    "gemma4": Pipeline("gemma4", tool="gemma4", reasoning="gemma4"),
    "gpt-oss": Pipeline("harmony", tool="gpt-oss", reasoning="gpt-oss"),
    "muse": Pipeline("muse", tool="muse", reasoning="muse"),
    "kimi_k3": Pipeline("kimi_k3_xtml", tool="kimi_k3", reasoning="kimi_k3"),
    "interns1": Pipeline("internlm2", tool="interns1", reasoning="interns1"),  # reasoning: Qwen3Detector
    # Tencent Hy3 and Hy4: one detector; a vocabulary without <tool_sep> is Hy4's (the name then ends at <arg_key>)
    "hunyuan": Pipeline("hy_tool_sep", tool="hunyuan", reasoning="hunyuan"),
    "hunyuan_hy4": Pipeline("hy4_arg_pairs", tool="hunyuan", reasoning="hunyuan"),
    # IQuest-Q1: GLM-4.7's compact pairs in <iquest_tool_call>; reasoning on unless the thinking flags say off
    "iquest_q1": Pipeline("iquest_q1", tool="iquest_q1", reasoning="iquest_q1"),
    "cohere_command4": Pipeline("cohere_command4", tool="cohere_command4", reasoning="cohere_command4"),
    "inkling": Pipeline("inkling", tool="inkling", reasoning="inkling"),
    # more registered names on formats that are families already (issue 23)
    "ling3": Pipeline("glm45", tool="ling3", reasoning="ling3"),  # Glm4MoeDetector and Glm45Detector subclasses
    # Spark-X2.5 writes GLM-4.7's compact <arg_key>/<arg_value> calls; Laguna (Poolside) too, on its own tokens
    "poolside_v1": Pipeline("laguna", tool="poolside_v1", reasoning="poolside_v1"),  # reasoning: Qwen3Detector, thinking opt-in
    "spark25": Pipeline("glm47", tool="spark25", reasoning="qwen3"),  # the model card's launch: --reasoning-parser qwen3
    "trinity": Pipeline("hermes", tool="trinity", reasoning="qwen3"),  # Qwen25Detector that deletes think tags
    "nemotron_3": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="nemotron_3"),
    "granite_thinking_parser": Pipeline("qwen3_coder", tool="qwen3_coder", reasoning="granite_thinking_parser"),
    # K2 Horizon (IFM): K2V3Detector for both; reasoning always forced (the template prefills the opener)
    "k2_horizon": Pipeline("k2_horizon_ifm", tool="k2_horizon", reasoning="k2_horizon"),
    "dots": Pipeline("dots_xml", tool="dots", reasoning="dots"),  # reasoning: Qwen3Detector
    # MiniCPM5 thinks as Qwen3 does (`<think>`, enable_thinking); SGLang registers no MiniCPM5 reasoning parser
    "minicpm5": Pipeline("minicpm5_xml", tool="minicpm5", reasoning="qwen3"),
    "gigachat3": Pipeline("gigachat3", tool="gigachat3"),  # GigaChat 3 has no reasoning format
    # Kimi-VL-Thinking: ◁think▷…◁/think▷ (KimiDetector); the model has no tool format, served with no tool parser
    "kimi": Pipeline("kimi_vl_think", reasoning="kimi"),
    # template-driven: `response_template` and `beam` parse by the `response_template` the model's tokenizer config
    # declares (the family's), so each is graded on every family whose models declare one; beam's own Harmony-like
    # template is only its fallback for a tokenizer without one
    **{f"{name}_{family}": Pipeline(family, tool=name, reasoning=name)
       for name in ("response_template", "beam") for family in ("hermes", "qwen3_coder", "gemma4")},
    # GigaChat 3.5: its reasoning name is DeepSeek-R1's detector; the server forces reasoning when the prompt opens it
    "gigachat35": Pipeline("gigachat35_gcml", tool="gigachat35", reasoning="gigachat35"),
    # Apertus 2509: the reasoning detector hands a tools block inside the inner section on to the tool detector
    "apertus2509": Pipeline("apertus", tool="apertus2509", reasoning="apertus2509"),
    # MiMo-V2-Flash / V2.5: MiMoDetector; the reasoning name is a Qwen3Detector reasoning only on enable_thinking
    "mimo": Pipeline("mimo_xml", tool="mimo", reasoning="mimo"),
}
MAPPING = mapping(PIPELINES)


def load() -> Engine:
    from .adapter import load_engine  # imports sglang (torch, triton): ImportError when not installed

    return load_engine(ENGINE, PIPELINES)
