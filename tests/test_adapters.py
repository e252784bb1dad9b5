"""Wiring of the vLLM and SGLang adapters, on inputs whose answer is certain.

They run where the engine is installed (its `grade(engine=…)` nox session runs them first, with
REQUIRE_ENGINES naming it, so a missing engine fails there instead of skipping).
"""

from __future__ import annotations

import importlib
import json
import os
from functools import cache

import pytest

from contract.adapter import Engine
from contract.assembly import assemble
from contract.catalog import ANSWER, THOUGHT, case
from contract.chunking import token_chunks
from contract.family import Sample
from contract.model import Message
from contract.tokenizer import encode_markup, family_tokenizer, token_stream
from fixtures import family

ENGINE_MODULES = ("vllm", "sglang")
REQUIRED = set(filter(None, os.environ.get("REQUIRE_ENGINES", "").split(",")))


@cache  # skips and failures are raised, not cached: they recur for every test
def _load(name: str) -> Engine:
    module = importlib.import_module(f"parsers.{name}")
    try:
        return module.load()
    except ImportError as exc:
        if name in REQUIRED:
            pytest.fail(f"{name} must be installed here (REQUIRE_ENGINES): {exc}")
        pytest.skip(f"{name} is not installed here: {exc}")


PIPELINES = [
    pytest.param(engine, parser, id=f"{engine}/{parser}")
    for engine in ENGINE_MODULES
    for parser in importlib.import_module(f"parsers.{engine}").PIPELINES
]


def _sample(parser_family: str, case_id: str) -> Sample:
    sample = family(parser_family).sample(case(case_id))
    assert isinstance(sample, Sample)
    return sample


def _both_ways(engine: str, parser: str, case_id: str) -> tuple[Message, Message]:
    """The one-shot message and the message assembled from one-token deltas."""
    loaded = _load(engine)
    module = importlib.import_module(f"parsers.{engine}")
    fam = family(module.PIPELINES[parser].family)
    sample = _sample(fam.name, case_id)
    under_test = loaded.factories[parser](fam)
    stream = token_stream(family_tokenizer(fam), sample.rendered)
    batch = under_test.parse(sample.text, stream.ids, sample.context, sample.stop)
    session = under_test.open_stream(sample.context)
    deltas = [d for chunk in token_chunks(stream, range(1, len(stream.ids))) for d in session.feed(chunk)]
    return batch, assemble([*deltas, *session.finish(sample.stop)])


@pytest.mark.parametrize(("engine", "parser"), PIPELINES)
def test_single_call_is_one_call_with_exact_arguments(engine: str, parser: str) -> None:
    for message in _both_ways(engine, parser, "tool.single"):
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
            ("get_weather", {"city": "Paris", "days": 3})
        ]
        assert message.content.strip() == ""
        assert message.reasoning == ""
        assert message.finish_reason == "tool_calls"
        assert message.tool_calls[0].id


@pytest.mark.parametrize(("engine", "parser"), PIPELINES)
def test_reasoning_then_answer_is_split(engine: str, parser: str) -> None:
    for message in _both_ways(engine, parser, "reasoning.only"):
        assert (message.reasoning.strip(), message.content.strip()) == (THOUGHT, ANSWER)
        assert message.tool_calls == ()
        assert message.finish_reason == "stop"


@pytest.mark.parametrize(("engine", "parser"), PIPELINES)
def test_prefilled_opener_reaches_the_engine(engine: str, parser: str) -> None:
    """The prompt ends with the opener: only the closer is in the output, and the engine knows."""
    batch, streamed = _both_ways(engine, parser, "reasoning.prefilled")
    for message in (batch, streamed):
        assert (message.reasoning.strip(), message.content.strip()) == (THOUGHT, ANSWER)


@pytest.mark.parametrize(("engine", "parser"), PIPELINES)
def test_thinking_off_reaches_the_engine(engine: str, parser: str) -> None:
    """Thinking off (the template closed an empty block in the prompt): the answer is content.

    Engines that assume a thinking request starts inside reasoning would take it for reasoning.
    """
    for message in _both_ways(engine, parser, "reasoning.empty"):
        assert (message.reasoning, message.content.strip()) == ("", ANSWER)


@pytest.mark.parametrize("engine", ENGINE_MODULES)
def test_coverage_lists_every_registered_name_and_the_graded_ones(engine: str) -> None:
    loaded = _load(engine)
    module = importlib.import_module(f"parsers.{engine}")
    rows = {(row.kind, row.name): row for row in loaded.coverage}
    for pipeline in module.PIPELINES.values():
        assert pipeline.family in rows["tool", pipeline.tool].families
        assert pipeline.family in rows["reasoning", pipeline.reasoning].families
    assert len(rows) > 2 * len(module.PIPELINES)  # the engines register far more names than we grade
    assert any(not row.families for row in loaded.coverage)


@pytest.mark.parametrize("engine", ENGINE_MODULES)
def test_engine_tokenizer_keeps_the_family_marker_ids(engine: str) -> None:
    """The tokenizer handed to the engine maps every marker to the single id our token streams use."""
    _load(engine)
    adapter = importlib.import_module(f"parsers.{engine}.adapter")
    for name in {p.family for p in importlib.import_module(f"parsers.{engine}").PIPELINES.values()}:
        fam = family(name)
        ours = family_tokenizer(fam)
        theirs = adapter._tokenizer(fam)
        for marker in fam.special_tokens:
            [marker_id] = encode_markup(ours, marker)
            assert theirs.convert_tokens_to_ids(marker) == marker_id
            assert theirs.decode([marker_id], skip_special_tokens=False) == marker
