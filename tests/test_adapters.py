"""Wiring of the vLLM, SGLang and openai-harmony adapters, on inputs whose answer is certain.

They run where the engine is installed (its `grade(engine=…)` nox session runs them first, with
REQUIRE_ENGINES naming it, so a missing engine fails there instead of skipping).
"""

from __future__ import annotations

import importlib
import json
import os
from functools import cache

import pytest

from contract.cases.catalog import ANSWER, THOUGHT, case
from contract.cases.family import Sample
from contract.cases.model import Message
from contract.grading.adapter import Engine
from contract.grading.assembly import assemble
from contract.grading.engines import ENGINES
from contract.streams.chunking import token_chunks
from contract.streams.tokenizer import encode_markup, family_tokenizer, token_stream
from fixtures import family

# every adapter of an installed engine but openai-harmony (graded on Harmony alone: tests/test_runs.py)
ENGINE_MODULES = tuple(entry.package for entry in ENGINES.values() if entry.distribution and entry.name != "openai-harmony")
REQUIRED = set(filter(None, os.environ.get("REQUIRE_ENGINES", "").split(",")))


@cache  # skips and failures are raised, not cached: they recur for every test
def _load(name: str) -> Engine:
    module = importlib.import_module(f"parsers.{name}")
    if REQUIRED and module.ENGINE not in REQUIRED:  # an engine's grade session wires its own engine only
        pytest.skip(f"{name}: not among REQUIRE_ENGINES ({', '.join(sorted(REQUIRED))})")
    try:
        return module.load()
    except ImportError as exc:
        if module.ENGINE in REQUIRED:
            pytest.fail(f"{name} must be installed here (REQUIRE_ENGINES): {exc}")
        pytest.skip(f"{name} is not installed here: {exc}")


# the families whose wiring of thinking flags and prompt tails is proven on every engine that grades them
FLAG_FAMILIES = ("hermes", "kimi_k2", "qwen3_coder")


# engine bugs that break even these inputs (the matrix grades them as KnownBroken); strict: a fix fails loudly
ENGINE_BUGS = {
    ("vllm", "granite", "tool.single"): "streaming: with the granite reasoning parser and no reasoning phrases the "
                                        "call is never extracted (all content)",
    ("vllm", "granite", "reasoning.only"): "streaming leaks part of `Here is my response:` into reasoning",
    ("vllm", "phi4_mini_json", "tool.single"): "phi4_mini_json has no streaming implementation: nothing streams",
    ("vllm", "jamba", "tool.single"): "streaming garbles the arguments (invalid JSON)",
    ("sglang", "gpt-oss", "tool.single"): "batch: has_tool_call wants `<|start|>assistant<|channel|>commentary`, "
                                          "which the first output message (after the prompt's header) lacks",
    ("lmdeploy", "llama3", "tool.single"): "skip_special_tokens stays on: `<|python_tag|>` vanishes",
    ("dynamo", "glm45", "tool.single"): "the glm45 tool parser never recognizes GLM-4.5's layout (pairs on lines "
                                        "of their own): the call stays raw markup in content",
    ("dynamo", "kimi_k25", "tool.single"): "the kimi_k25 tool parser leaves the K2 call section in content",
    ("dynamo", "minimax_m2", "tool.single"): "the prefilled `<think>` is ignored: the `</think>` closer stays in content",
    ("dynamo", "mistral", "tool.single"): "the mistral parser drops a v13 `[TOOL_CALLS]name[ARGS]{…}` call entirely",
    ("dynamo", "mistral", "reasoning.only"): "the mistral reasoning parser leaves `[THINK]…[/THINK]` in content",
    ("vllm_mlx", "kimi_k2", "tool.single"): "streaming: the server's tool-markup gate lacks Kimi's section marker: "
                                           "the parser never runs, the call is content",
    ("vllm_mlx", "deepseek_v3", "tool.single"): "streaming: the tool-markup gate lacks `<｜tool▁calls▁begin｜>`",
    ("vllm_mlx", "granite", "tool.single"): "streaming: the tool-markup gate lacks `<|tool_call|>`",
    ("vllm_mlx", "xlam", "tool.single"): "streaming: the tool-markup gate has no marker for xLAM's bare `[{`: the "
                                        "parser never runs, the array is content",
    ("vllm_mlx", "mistral_pre_v11", "tool.single"): "streaming: the pre-v11 array is parsed as a call named `[`",
    ("vllm_mlx", "harmony", "tool.single"): "streaming leaks `comment` of the commentary header into content",
    ("vllm_mlx", "gpt-oss", "tool.single"): "streaming leaks `comment` of the commentary header into content",
    ("vllm_mlx", "harmony", "reasoning.only"): "streaming: the final channel's text goes to reasoning",
    ("vllm", "step5", "tool.single"): "DeepSeek-R1's reasoning parser ignores thinking off: the call stays reasoning",
    ("vllm", "deepseek_r1", "tool.single"): "the reasoning parser ignores thinking off: the call stays reasoning",
    ("vllm", "step5", "reasoning.empty"): "DeepSeek-R1's reasoning parser ignores thinking off: the answer is reasoning",
    ("vllm", "functiongemma", "tool.single"): "functiongemma-arg-regex-reads-strings-only: the bare `days:3` is "
                                              "dropped, only <escape>-quoted values are read",
    ("sglang", "gigachat35", "tool.single"): "DeepSeek-R1's reasoning detector ignores thinking off: the call stays "
                                            "reasoning",
    ("vllm_mlx", "poolside_v1", "tool.single"): "streaming: a typed value whose </arg_value> comes a delta later is "
                                               "skipped as a duplicate key",
    ("vllm_mlx", "auto-qwen3_coder", "tool.single"): "auto's Nemotron route keeps every XML value a string",
    ("sglang", "interns1", "tool.single"): "spaced-action-opener-only: the detector wants `<|action_start|> <|plugin|>` "
                                           "with a space, which the model never writes: the call stays content",
    ("vllm", "hy_v3", "reasoning.only"): "hy-v3-reasoning-needs-reasoning-effort: without reasoning_effort low/high "
                                         "in chat_template_kwargs the identity parser returns it all as content",
    ("vllm", "hy_v4", "tool.single"): "hy-v4-thinking-from-reasoning-effort-only: without reasoning_effort no_think "
                                      "the parser reads a thinking turn: the call stays reasoning",
    ("dynamo", "qwen3", "tool.single"): "tool parser `qwen3` names only the parsers-v2 unified family, which the "
                                        "default parser generation never routes to: no call is extracted",
    ("sglang", "cohere_command4", "reasoning.only"): "thinking-opener-kept-in-reasoning: the stream keeps the "
                                                     "<|START_THINKING|> the model writes at the head of the reasoning",
}


def _pipelines(case_id: str, *, reasoning: bool = False, families: tuple[str, ...] | None = None) -> list[object]:
    """Every graded pipeline of every engine module (those with a reasoning parser, of these families); a
    reasoning parser served with no tool parser has no tool case to wire.

    Append-think pipelines keep the think block in content by design: the matrix grades them
    against that form (tests/test_append_think.py proves the mechanism).
    """
    return [
        pytest.param(engine, parser, id=f"{engine}/{parser}", marks=[
            pytest.mark.xfail(strict=True, reason=ENGINE_BUGS[engine, parser, case_id])
        ] if (engine, parser, case_id) in ENGINE_BUGS else [])
        for engine in ENGINE_MODULES
        for parser, pipeline in importlib.import_module(f"parsers.{engine}").PIPELINES.items()
        if (pipeline.reasoning or not reasoning) and (families is None or pipeline.family in families)
        and not pipeline.reasoning_in_content and (pipeline.tool or not case_id.startswith("tool."))
    ]


def _sample(parser_family: str, case_id: str) -> Sample:
    sample = family(parser_family).sample(case(case_id))
    assert isinstance(sample, Sample)
    return sample


def _both_ways(engine: str, parser: str, case_id: str) -> tuple[Message, Message]:
    """The one-shot message and the message assembled from one-token deltas."""
    loaded = _load(engine)
    module = importlib.import_module(f"parsers.{engine}")
    fam = family(module.MAPPING[parser])
    sample = _sample(fam.name, case_id)
    under_test = loaded.factories[parser](fam)
    stream = token_stream(family_tokenizer(fam), sample.rendered)
    batch = under_test.parse(sample.text, stream.ids, sample.context, sample.stop)
    session = under_test.open_stream(sample.context)
    deltas = [d for chunk in token_chunks(stream, range(1, len(stream.ids))) for d in session.feed(chunk)]
    return batch, assemble([*deltas, *session.finish(sample.stop)])


@pytest.mark.parametrize(("engine", "parser"), _pipelines("tool.single"))
def test_single_call_is_one_call_with_exact_arguments(engine: str, parser: str) -> None:
    for message in _both_ways(engine, parser, "tool.single"):
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
            ("get_weather", {"city": "Paris", "days": 3})
        ]
        assert message.content.strip() == ""
        assert message.reasoning == ""
        assert message.finish_reason == "tool_calls"
        assert message.tool_calls[0].id


@pytest.mark.parametrize(("engine", "parser"), _pipelines("reasoning.only", reasoning=True))
def test_reasoning_then_answer_is_split(engine: str, parser: str) -> None:
    for message in _both_ways(engine, parser, "reasoning.only"):
        assert (message.reasoning.strip(), message.content.strip()) == (THOUGHT, ANSWER)
        assert message.tool_calls == ()
        assert message.finish_reason == "stop"


@pytest.mark.parametrize(("engine", "parser"), _pipelines("reasoning.prefilled", reasoning=True, families=FLAG_FAMILIES))
def test_prefilled_opener_reaches_the_engine(engine: str, parser: str) -> None:
    """The prompt ends with the opener: only the closer is in the output, and the engine knows."""
    batch, streamed = _both_ways(engine, parser, "reasoning.prefilled")
    for message in (batch, streamed):
        assert (message.reasoning.strip(), message.content.strip()) == (THOUGHT, ANSWER)


@pytest.mark.parametrize(("engine", "parser"), _pipelines("reasoning.empty", reasoning=True, families=FLAG_FAMILIES))
def test_thinking_off_reaches_the_engine(engine: str, parser: str) -> None:
    """Thinking off (the template closed an empty block in the prompt): the answer is content.

    Engines that assume a thinking request starts inside reasoning would take it for reasoning.
    """
    for message in _both_ways(engine, parser, "reasoning.empty"):
        # whitespace-only reasoning (the empty block's newlines) is no reasoning, as the matrix compares it
        assert (message.reasoning.strip(), message.content.strip()) == ("", ANSWER)


@pytest.mark.parametrize("engine", ENGINE_MODULES)
def test_coverage_lists_every_registered_name_and_the_graded_ones(engine: str) -> None:
    loaded = _load(engine)
    module = importlib.import_module(f"parsers.{engine}")
    rows = {(row.kind, row.name): row for row in loaded.coverage}
    for pipeline in module.PIPELINES.values():
        for kind in ("tool", "reasoning"):
            for name in pipeline.names(kind):
                assert pipeline.family in rows[kind, name].families
    registered = importlib.import_module(f"parsers.{engine}.adapter")._registered()
    assert set(rows) == {(kind, name) for kind, names in registered.items() for name in names}


@pytest.mark.parametrize("engine", ENGINE_MODULES)
def test_engine_tokenizer_keeps_the_family_marker_ids(engine: str) -> None:
    """The tokenizer handed to the engine maps every marker to the single id our token streams use."""
    _load(engine)
    adapter = importlib.import_module(f"parsers.{engine}.adapter")
    for name in {p.family for p in importlib.import_module(f"parsers.{engine}").PIPELINES.values()}:
        fam = family(name)
        ours = family_tokenizer(fam)
        theirs = adapter.engine_tokenizer(fam)
        for marker in fam.special_tokens:
            [marker_id] = encode_markup(ours, marker)
            # an HF tokenizer, or a `tokenizers.Tokenizer` where the engine loads tokenizer.json itself (Dynamo)
            to_id = getattr(theirs, "convert_tokens_to_ids", None) or theirs.token_to_id
            assert to_id(marker) == marker_id
            assert theirs.decode([marker_id], skip_special_tokens=False) == marker


@pytest.mark.parametrize("engine", ("vllm", "sglang"))
def test_template_driven_parsers_hold_the_family_response_template(engine: str) -> None:
    """vLLM's hf/beam and SGLang's response_template/beam read `response_template` off the tokenizer: the one
    the server holds carries the family's template as its tokenizer config would, and every family that declares
    one grades each such name."""
    loaded = _load(engine)
    module = importlib.import_module(f"parsers.{engine}")
    adapter = importlib.import_module(f"parsers.{engine}.adapter")
    driven = {parser: pipeline for parser, pipeline in module.PIPELINES.items() if adapter.template_driven(pipeline)}
    declaring = {p.family for p in driven.values()}
    assert declaring and all(family(name).response_template is not None for name in declaring)
    names = {p.tool for p in driven.values()}
    assert {(p.tool, p.family) for p in driven.values()} == {(n, f) for n in names for f in declaring}
    for parser, pipeline in driven.items():
        fam = family(pipeline.family)
        tokenizer = loaded.factories[parser](fam).server.tokenizer
        assert tokenizer.response_template == fam.response_template.template
        assert tokenizer.init_kwargs["response_template"] == fam.response_template.template


def test_family_response_templates_are_the_ones_transformers_serve_falls_back_to() -> None:
    """One template in three engines: each family's is the fallback `transformers serve` uses for its model type,
    the reasoning field named `thinking` (vLLM and SGLang serve no `reasoning_content`), and its prompt is the one
    transformers is graded after."""
    _load("transformers")
    from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS

    for pipeline in importlib.import_module("parsers.transformers").PIPELINES.values():
        fallback = next(t for types, t in _RESPONSE_TEMPLATE_FALLBACKS.items() if pipeline.tool in types)
        fields = {("thinking" if n == "reasoning_content" else n): f for n, f in fallback["fields"].items()}
        template = family(pipeline.family).response_template
        assert template is not None and dict(template.template) == {**fallback, "fields": fields}


# openai-harmony: OpenAI's own Harmony parser on o200k_harmony ids (no finish reason, no registry)


def test_harmony_channels_map_to_reasoning_and_content() -> None:
    for message in _both_ways("openai_harmony", "harmony", "harmony.channels"):
        assert (message.reasoning, message.content, message.tool_calls) == (THOUGHT, "Let me check." + ANSWER, ())


def test_harmony_call_after_analysis_is_a_call() -> None:
    for message in _both_ways("openai_harmony", "harmony", "harmony.call_after_analysis"):
        assert message.reasoning == THOUGHT
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
            ("get_weather", {"city": "Paris", "days": 3})
        ]
        assert message.tool_calls[0].id


def test_harmony_quoted_markers_reach_the_engine_as_ordinary_tokens() -> None:
    """The family ids say which marker texts are special tokens; a marker quoted in an argument is not."""
    expected = _sample("harmony", "tool.marker_in_args").scenario.calls[0].arguments
    for message in _both_ways("openai_harmony", "harmony", "tool.marker_in_args"):
        assert [json.loads(c.arguments) for c in message.tool_calls] == [expected]


def test_harmony_vocabulary_gives_the_real_special_token_ids() -> None:
    _load("openai_harmony")
    encoding = importlib.import_module("parsers.openai_harmony.adapter").encoding()
    ids = {m: encoding.encode(m, allowed_special="all") for m in family("harmony").special_tokens}
    assert ids == {"<|return|>": [200002], "<|constrain|>": [200003], "<|channel|>": [200005],
                   "<|start|>": [200006], "<|end|>": [200007], "<|message|>": [200008], "<|call|>": [200012]}
    assert encoding.encode("Paris", disallowed_special=()) == [72782]


def test_harmony_vocab_builder_expands_js_tiktoken_ranks() -> None:
    """`! OFFSET TOKEN…` lines become one `TOKEN RANK` line per token, by rank (needs no engine)."""
    vocab = importlib.import_module("parsers.openai_harmony.vocab")
    module = 'export default {"pat_str":"x","special_tokens":{},"bpe_ranks":"! 0 IQ== Ig==\\n! 5 Iw=="};'
    assert vocab.tiktoken_file(module) == b"IQ== 0\nIg== 1\nIw== 5\n"
