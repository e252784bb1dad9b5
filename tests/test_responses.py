"""The Responses API surface: output items and events read as a client reads them, and flagged where they break.

Unit tests drive `contract.grading.responses` with hand-written responses and event streams; the miniature servers
(`tests.miniatures.responses`) are graded with the real matrix and must be flagged exactly where their defect bites,
by an oracle taken from the item layout the reference's own Responses server writes for each case.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from grading_run import Run, grade

from contract.cases.catalog import CATALOG
from contract.cases.family import Sample
from contract.cases.model import (
    Chunk,
    Delta,
    Message,
    NamedChoice,
    RequestContext,
    Tool,
    ToolCall,
    ToolCallDelta,
)
from contract.grading import checks
from contract.grading.responses import EventReader, ResponsesView, layout, message_of
from fixtures import family
from parsers.reference import load as load_reference
from parsers.reference.responses import EventWriter
from parsers.requests import responses_request

CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}
THOUGHT = {"type": "reasoning", "id": "rs_0", "summary": [], "content": [{"type": "reasoning_text", "text": "Hmm."}]}
TEXT = {"type": "message", "id": "msg_0", "role": "assistant",
        "content": [{"type": "output_text", "text": "Sure.", "annotations": []}]}


def test_items_read_as_a_message() -> None:
    message = message_of({"status": "completed", "output": [THOUGHT, TEXT, CALL]})
    assert message == Message("Sure.", "Hmm.", (ToolCall("get_weather", '{"city": "Paris"}', "call_1"),),
                               "tool_calls", ("reasoning", "message", "function_call"), ())


def test_cut_response_finishes_by_length() -> None:
    response = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [TEXT]}
    assert message_of(response).finish_reason == "length"


@pytest.mark.parametrize(("response", "fault"), [
    ({"status": "completed", "output": [{**CALL, "call_id": ""}]}, "function_call 0 has no call_id"),
    ({"status": "completed", "output": [CALL, {**CALL, "id": "fc_2"}]}, "call_id 'call_1' names 2 function_call items"),
    ({"status": "completed", "output": [{"type": "custom_tool_call", "call_id": "c", "input": "x"}]}, "custom_tool_call"),
    ({"status": "failed", "output": []}, "status 'failed'"),
])
def test_item_faults(response: dict[str, Any], fault: str) -> None:
    assert any(fault in f for f in message_of(response).faults), message_of(response).faults


class _Replay:
    """A stream session replaying fixed events: one list per chunk, then the finish's."""

    def __init__(self, per_chunk: list[list[dict[str, Any]]], final: list[dict[str, Any]]) -> None:
        self.per_chunk, self.final = list(per_chunk), final

    def feed(self, chunk: Chunk) -> list[dict[str, Any]]:
        return self.per_chunk.pop(0)

    def finish(self, stop: str) -> list[dict[str, Any]]:
        return self.final


def _written(*deltas: Delta) -> list[dict[str, Any]]:
    """The reference writer's events for these chat deltas (the last one's finish reason ends the response)."""
    writer = EventWriter()
    events = writer.start()
    for delta in deltas:
        events += writer.write(delta)
    return events + writer.end(deltas[-1].finish_reason)


def _read(events: list[dict[str, Any]]) -> tuple[Message, list[Delta]]:
    reader = EventReader(_Replay([events], []))
    deltas = [*reader.feed(Chunk("")), *reader.finish("stop")]
    return checks.surfaced(checks.assemble(deltas), deltas), deltas


CALL_DELTAS = (Delta(reasoning="Hmm."), Delta(content="Sure."),
               Delta(tool_calls=(ToolCallDelta(0, "call_1", "function", "get_weather", '{"city": '),)),
               Delta(tool_calls=(ToolCallDelta(0, arguments='"Paris"}'),)), Delta(finish_reason="tool_calls"))


def test_a_correct_stream_reads_as_its_deltas() -> None:
    message, deltas = _read(_written(*CALL_DELTAS))
    assert message.faults == ()
    assert message.items == ("reasoning", "message", "function_call")
    assert (message.content, message.reasoning, message.tool_calls) == (
        "Sure.", "Hmm.", (ToolCall("get_weather", '{"city": "Paris"}', "call_1"),))
    assert not checks.delta_protocol(checks.StreamRun((), (tuple(deltas),), ()))


def _faults(events: list[dict[str, Any]]) -> tuple[str, ...]:
    return _read(events)[0].faults


def test_a_reused_output_index_is_rejected_as_the_sdk_rejects_it() -> None:
    events = _written(*CALL_DELTAS)
    added = [e for e in events if e["type"] == "response.output_item.added"]
    added[-1]["output_index"] = 1
    assert any("OpenAI SDK rejects" in f and "Duplicate response output index 1" in f for f in _faults(events))


def test_a_stream_without_its_terminal_event() -> None:
    assert _faults(_written(*CALL_DELTAS)[:-1]) == ("the stream ends without response.completed or response.incomplete",)


def test_a_completed_response_that_contradicts_its_stream() -> None:
    events = _written(*CALL_DELTAS)
    events[-1]["response"]["output"][2]["arguments"] = '{"city": "Rome"}'
    assert any("output differs from the events streamed" in f and "Rome" in f for f in _faults(events))


def test_arguments_sent_only_when_done_are_read_and_contradicting_ones_flagged() -> None:
    events = [e for e in _written(*CALL_DELTAS) if e["type"] != "response.function_call_arguments.delta"]
    message, _ = _read(events)
    assert message.faults == () and message.tool_calls[0].arguments == '{"city": "Paris"}'
    events = _written(*CALL_DELTAS)
    for event in events:
        if event["type"] == "response.function_call_arguments.done":
            event["arguments"] = '{"city": "Rome"}'
    assert any("response.function_call_arguments.done at output index 2 carries '{\"city\": \"Rome\"}'" in f
               for f in _faults(events))


def test_item_order_counts_between_stream_and_batch_but_a_blank_message_does_not() -> None:
    streamed = Message("Sure.", "", (ToolCall("f", "{}", "c"),), "tool_calls", ("function_call", "message"))
    batch = Message("Sure.", "", (ToolCall("f", "{}", "c"),), "tool_calls", ("message", "function_call"))
    assert [f.check for f in checks.stream_equals_batch(streamed, batch, keep_ids=True)] == ["stream_equals_batch"]
    padded = Message("Sure.", "", batch.tool_calls, "tool_calls", ("message", "message(blank)", "function_call"))
    assert checks.stream_equals_batch(padded, batch, keep_ids=True) == []
    assert layout([TEXT, {**TEXT, "content": [{"type": "output_text", "text": "\n\n"}]}]) == ("message", "message(blank)")


def test_the_reference_server_answers_one_shot_as_it_streams() -> None:
    hermes = family("hermes")
    sample = hermes.sample(next(c for c in CATALOG if c.id == "tool.content_between"))
    assert isinstance(sample, Sample)
    view = ResponsesView(load_reference().factories["hermes"](hermes))
    once = view.parse(sample.text, None, sample.context, sample.stop)
    session = view.open_stream(sample.context)
    deltas = [d for piece in re.split("(?=<)", sample.text) for d in session.feed(Chunk(piece))]
    deltas += session.finish(sample.stop)
    assert once.items == checks.surfaced(checks.assemble(deltas), deltas).items
    assert once.items == ("function_call", "message", "function_call")  # the text's order: call, narration, call


# the miniature servers, graded with the real matrix

MODES = ("batch", "tokens", "responses", "responses-tokens")


@pytest.fixture(scope="module")
def miniatures(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("responses")
    return grade(tmp, "--engine", "tests.miniatures.responses", "-n", "2", *(a for m in MODES for a in ("--mode", m)))


def _layouts() -> dict[str, tuple[str, ...]]:
    """The item layout (blank messages left out) the reference's Responses server writes for each hermes case."""
    hermes = family("hermes")
    served = load_reference().factories["hermes"](hermes)
    out = {}
    for case in CATALOG:
        sample = hermes.sample(case)
        if isinstance(sample, Sample):
            response = served.respond(sample.text, None, sample.context, sample.stop)  # type: ignore[attr-defined]
            out[case.id] = tuple(i for i in layout(response["output"]) if i != "message(blank)")
    return out


def _flagged(run: Run, parser: str) -> dict[tuple[str, str], list[str]]:
    return {(c.case, c.mode): sorted({f.check for f in c.failures}) for c in run.cells(parser=parser)
            if c.outcome.value in ("fail", "error")}


def test_message_first_is_flagged_exactly_where_a_message_follows_a_call(miniatures: Run) -> None:
    wanted = {(case, "responses-tokens"): ["stream_equals_batch"] for case, items in _layouts().items()
              if list(items) != sorted(items, key=lambda kind: kind == "function_call")}
    assert wanted, "the catalog has no case whose text puts a message after a call"
    assert _flagged(miniatures, "responses_miniature/message_first") == wanted


def test_reused_output_index_is_flagged_exactly_where_a_call_follows_another_item(miniatures: Run) -> None:
    """The stream a client rejects is graded on what could be read of it: other checks may fail beside `responses`."""
    wanted = {(case, "responses-tokens") for case, items in _layouts().items() if "function_call" in items[1:]}
    assert wanted
    flagged = _flagged(miniatures, "responses_miniature/reused_output_index")
    assert set(flagged) == wanted
    assert all("responses" in found for found in flagged.values())


def test_only_engines_that_serve_it_are_graded_on_the_responses_api(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.coalescing", "--case", "tool.single")
    assert {c.mode for c in run.results["cells"]} and not any(c.mode.startswith("responses") for c in run.results["cells"])


def test_responses_request_carries_the_case() -> None:
    context = RequestContext(tools=(Tool("get_weather", {"type": "object"}),), tool_choice=NamedChoice("get_weather"),
                             parallel_tool_calls=False, thinking=False,
                             history=({"role": "user", "content": "Hi"},
                                      {"role": "assistant", "content": "", "reasoning_content": "r", "tool_calls": [
                                          {"id": "c1", "type": "function",
                                           "function": {"name": "get_weather", "arguments": "{}"}}]},
                                      {"role": "tool", "tool_call_id": "c1", "content": "21"}))
    body = responses_request(context, model=None)
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["tools"] == [{"type": "function", "name": "get_weather", "description": "", "parameters": {"type": "object"}}]
    assert [i.get("type", i.get("role")) for i in body["input"]] == ["user", "reasoning", "function_call",
                                                                     "function_call_output"]
    assert body["parallel_tool_calls"] is False and body["chat_template_kwargs"]["enable_thinking"] is False


def test_a_text_delta_on_a_call_is_rejected_as_the_sdk_rejects_it() -> None:
    events = _written(*CALL_DELTAS)
    arguments = next(e for e in events if e["type"] == "response.function_call_arguments.delta")
    arguments.update(type="response.output_text.delta", content_index=0, logprobs=[])
    assert any("rejects event" in f and "holds a function_call item" in f for f in _faults(events))
