"""The stream and message checks on hand-built deltas and messages."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contract.cases.catalog import case
from contract.cases.expected import ExpectedMessage
from contract.cases.family import Sample
from contract.cases.model import Delta, Message, ToolCall, ToolCallDelta
from contract.cases.rendering import Kind
from contract.grading import checks
from contract.grading.assembly import assemble
from contract.grading.compare import json_equal, matches, squeeze
from contract.streams.chunking import char_chunks
from fixtures import family
from fixtures.families.kimi_k2 import CALL_END, SECTION_BEGIN

KIMI_MARKERS = family("kimi_k2").markers


def _run(*deltas: Delta) -> checks.StreamRun:
    return checks.StreamRun(chunks=(), per_chunk=(deltas,), final=())


def _first(index: int, call_id: str | None, name: str | None) -> Delta:
    return Delta(tool_calls=(ToolCallDelta(index, call_id, "function", name, ""),))


def _arguments(index: int, text: str, call_id: str | None = None) -> Delta:
    return Delta(tool_calls=(ToolCallDelta(index, call_id, arguments=text),))


def _content(*pieces: str) -> tuple[Delta, ...]:
    return tuple(Delta(content=p) for p in pieces)


GOOD = (
    Delta(content="Let me check. "),
    _first(0, "call_0", "get_weather"),
    _arguments(0, '{"city": '),
    _arguments(0, '"Paris"}'),
    _first(1, "call_1", "get_time"),
    _arguments(1, '{"tz": "UTC"}'),
    Delta(finish_reason="tool_calls"),
)


def _replaced(position: int, delta: Delta) -> tuple[Delta, ...]:
    return (*GOOD[:position], delta, *GOOD[position + 1 :])


def _protocol(deltas: tuple[Delta, ...]) -> list[str]:
    return [f.detail for f in checks.delta_protocol(_run(*deltas))]


def test_delta_protocol_passes_a_correct_sequence() -> None:
    assert _protocol(GOOD) == []


@pytest.mark.parametrize(
    ("deltas", "problem"),
    [
        pytest.param(_replaced(1, _first(0, "call_0", None)), "lacks name", id="no-name"),
        pytest.param(_replaced(3, _arguments(0, '"Paris"}', "call_9")), "changed", id="id-changes"),
        pytest.param(_replaced(3, _arguments(0, '"Paris"}', "call_0")), "repeated", id="id-resent"),
        pytest.param((GOOD[0], *GOOD[4:6], *GOOD[1:4], GOOD[6]), "index 1 appears before index 0",
                     id="index-skips"),
        pytest.param((*GOOD, Delta(content="late")), "after finish_reason", id="after-finish"),
    ],
)
def test_delta_protocol_flags(deltas: tuple[Delta, ...], problem: str) -> None:
    problems = _protocol(deltas)
    assert any(problem in p for p in problems), problems


def test_fragments_flags_a_split_marker_in_content() -> None:
    outcome = ExpectedMessage("exact", content="Hello there")
    failures = checks.fragments(KIMI_MARKERS, outcome, _run(*_content("Hello <|tool_calls_sec", "there")))
    assert [f.check for f in failures] == ["markers"]
    assert SECTION_BEGIN in failures[0].detail


def test_fragments_allows_expected_marker_text() -> None:
    outcome = ExpectedMessage("exact", content=f"Hello {SECTION_BEGIN} opens a section")
    run = _run(*_content("Hello <|tool_calls_sec", "tion_begin|> opens a section"))
    assert checks.fragments(KIMI_MARKERS, outcome, run) == []


def test_markers_flags_a_full_marker_in_content() -> None:
    outcome = ExpectedMessage("exact", content="Done.")
    failures = checks.markers_leaked(KIMI_MARKERS, outcome, Message(content=f"Done.{CALL_END}"))
    assert [f.check for f in failures] == ["markers"]
    assert CALL_END in failures[0].detail


def test_markers_allows_a_quoted_marker_but_not_an_extra_one() -> None:
    quoted = f"End each call with {CALL_END}."
    outcome = ExpectedMessage("exact", content=quoted)
    assert checks.markers_leaked(KIMI_MARKERS, outcome, Message(content=quoted)) == []
    assert checks.markers_leaked(KIMI_MARKERS, outcome, Message(content=quoted + CALL_END))


def _duplication(pieces: tuple[str, ...]) -> list[checks.Failure]:
    outcome = ExpectedMessage("exact", content="Hello world, how are you?")
    deltas = _content(*pieces)
    return checks.duplication(outcome, assemble(deltas), _run(*deltas))


def test_duplication_flags_a_resent_piece() -> None:
    failures = _duplication(("Hello world, ", "Hello world, ", "how are you?"))
    assert [f.check for f in failures] == ["duplication"]


def test_duplication_passes_each_piece_once() -> None:
    assert _duplication(("Hello ", "world, ", "how ", "are you?")) == []


def _sample(family_name: str, case_id: str) -> Sample:
    sample = family(family_name).sample(case(case_id))
    assert isinstance(sample, Sample)
    return sample


def _calls(outcome: ExpectedMessage, **dumps: Any) -> tuple[ToolCall, ...]:
    """The outcome's calls as a server would return them, arguments written by `json.dumps(**dumps)`."""
    return tuple(ToolCall(c.name, json.dumps(c.arguments, **dumps), f"call_{i}")
                 for i, c in enumerate(outcome.tool_calls))


def test_conservation_flags_lost_narration() -> None:
    sample = _sample("hermes", "tool.content_between")
    narration, calls = sample.expected.preferred.content, _calls(sample.expected.preferred)
    assert checks.conservation(checks.conserved_pieces(sample), Message(content=narration, tool_calls=calls)) == []
    failures = checks.conservation(checks.conserved_pieces(sample), Message(tool_calls=calls))
    assert [f.check for f in failures] == ["conservation"]
    assert narration.strip()[:40] in failures[0].detail


def test_conservation_accepts_reserialized_arguments() -> None:
    sample = _sample("kimi_k2", "tool.complex_args")
    calls = _calls(sample.expected.preferred, ensure_ascii=True, indent=2)
    (written,) = sample.rendered.pieces(Kind.ARGUMENTS)
    assert squeeze(written) not in squeeze(calls[0].arguments), "re-serialization changed nothing"
    assert checks.conservation(checks.conserved_pieces(sample), Message(tool_calls=calls)) == []


def test_stream_equals_batch_compares_only_native_ids() -> None:
    batch = Message(content="ok", tool_calls=(ToolCall("get_weather", '{"city": "Paris"}', "call_a"),))
    stream = Message(content="ok\n", tool_calls=(ToolCall("get_weather", '{"city":"Paris"}', "call_b"),))
    assert checks.stream_equals_batch(stream, batch, keep_ids=False) == []
    failures = checks.stream_equals_batch(stream, batch, keep_ids=True)
    assert [f.check for f in failures] == ["stream_equals_batch"]
    assert "call_b" in failures[0].detail


def test_stream_equals_batch_flags_different_arguments() -> None:
    batch = Message(tool_calls=(ToolCall("get_weather", '{"city": "Paris"}', "call_a"),))
    stream = Message(tool_calls=(ToolCall("get_weather", '{"city": "Pari"}', "call_a"),))
    assert checks.stream_equals_batch(stream, batch, keep_ids=False)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (True, 1, False),
        (0, False, False),
        (1, 1.0, True),
        ({"a": [1, {"b": True}]}, {"a": [1.0, {"b": True}]}, True),
        ({"a": [True]}, {"a": [1]}, False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ("1", 1, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


def test_matches_notes_a_whitespace_only_difference() -> None:
    outcome = ExpectedMessage("exact", content="It will be sunny in Paris.")
    verdict = matches(outcome, Message(content="It will be\nsunny in  Paris."))
    assert verdict.ok and verdict.problems == ()
    assert any("whitespace" in n for n in verdict.notes)


def test_matches_fails_a_real_difference() -> None:
    outcome = ExpectedMessage("exact", content="It will be sunny in Paris.")
    verdict = matches(outcome, Message(content="It will rain in Paris."))
    assert not verdict.ok and verdict.problems


def test_finish_reason() -> None:
    outcome = ExpectedMessage("exact", finish_reason="length")
    assert checks.finish_reason(outcome, Message(finish_reason=None)) == []
    assert checks.finish_reason(outcome, Message(finish_reason="length")) == []
    failures = checks.finish_reason(outcome, Message(finish_reason="stop"))
    assert [f.check for f in failures] == ["finish_reason"]


def test_expected_accepts_the_second_outcome_with_a_note() -> None:
    sample = _sample("kimi_k2", "tool.truncated_args")
    as_content = sample.expected.outcomes[1]
    observed = Message(content=as_content.content, tool_calls=_calls(as_content), finish_reason="length")
    failures, notes, outcome = checks.expected(sample.expected, observed)
    assert failures == [] and outcome is as_content
    assert any(as_content.label in n for n in notes)


def test_holdback_measures_withheld_text() -> None:
    sample = _sample("kimi_k2", "tool.none")
    chunks = char_chunks(sample.text, range(7, len(sample.text), 7))
    eager = checks.StreamRun(chunks, tuple((Delta(content=c.text),) for c in chunks), ())
    lazy = checks.StreamRun(chunks, tuple(() for _ in chunks), (Delta(content=sample.text),))
    assert checks.holdback(sample.text, checks.visible_spans(sample), KIMI_MARKERS, eager) == 0
    assert checks.holdback(sample.text, checks.visible_spans(sample), KIMI_MARKERS, lazy) == len(squeeze(sample.text))


def test_assemble_concatenates_a_resent_id() -> None:
    """Why resending an id is a protocol failure: the SDK's accumulation glues the two together."""
    correct = (_first(0, "call_0", "get_weather"), _arguments(0, '{"city": "Paris"}'))
    resent = (_first(0, "call_0", "get_weather"), _arguments(0, '{"city": "Paris"}', "call_0"))
    assert assemble(correct).tool_calls == (ToolCall("get_weather", '{"city": "Paris"}', "call_0"),)
    assert assemble(resent).tool_calls[0].id == "call_0call_0"
    assert _protocol(resent)


def _long_args_runs() -> tuple[Sample, checks.StreamRun, checks.StreamRun]:
    """tool.long_args on kimi_k2 cut every 64 characters: one parser passes each argument piece on as it
    arrives, the other holds the whole call until the stream ends."""
    sample = _sample("kimi_k2", "tool.long_args")
    chunks = char_chunks(sample.text, range(64, len(sample.text), 64))
    arguments = sample.rendered.spans[[s.kind for s in sample.rendered.spans].index(Kind.ARGUMENTS)]
    per_chunk, end = [], 0
    for chunk in chunks:
        start, end = end, end + len(chunk.text)
        piece = sample.text[max(start, arguments.start) : min(end, arguments.end)]
        per_chunk.append((_arguments(0, piece),) if piece else ())
    streaming = checks.StreamRun(chunks, tuple(per_chunk), ())
    holding = checks.StreamRun(chunks, tuple(() for _ in chunks), tuple(d for g in per_chunk for d in g))
    return sample, streaming, holding


def test_withheld_counts_argument_text_held_at_chunk_boundaries() -> None:
    sample, streaming, holding = _long_args_runs()
    payload = checks.payload_spans(sample)
    assert checks.withheld(sample.text, payload, KIMI_MARKERS, streaming)[0] == 0
    held, at = checks.withheld(sample.text, payload, KIMI_MARKERS, holding)
    last = len(sample.text) - len(holding.chunks[-1].text)  # a parser may lag one delta: the last is not held
    arguments = sample.rendered.spans[[s.kind for s in sample.rendered.spans].index(Kind.ARGUMENTS)]
    assert held == len(squeeze(sample.text[arguments.start : min(last, arguments.end)])) > 10000
    assert at == len(holding.chunks) - 1
    lagging = checks.StreamRun(streaming.chunks, ((), *streaming.per_chunk[:-1]), streaming.per_chunk[-1])
    assert checks.withheld(sample.text, payload, KIMI_MARKERS, lagging)[0] <= 64


def test_incremental_bound_flags_a_held_call_in_streaming_modes_only() -> None:
    sample, _, holding = _long_args_runs()
    held, at = checks.withheld(sample.text, checks.payload_spans(sample), KIMI_MARKERS, holding)
    failures = checks.incremental("tokens", held, at)
    assert [f.check for f in failures] == ["incremental"] and str(held) in failures[0].detail
    assert checks.incremental("whole", held, at) == []  # one chunk: nothing to stream incrementally
    assert checks.incremental("tokens", checks.INCREMENTAL_BOUND, at) == []
