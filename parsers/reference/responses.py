"""The reference's Responses API: any chat parser's deltas written as the Responses API's output items and events.

Items follow the text: a reasoning item while reasoning streams, a message item while content does, a
`function_call` item per call (its `call_id` the call's id); a new kind of delta closes the open item. One shot is
the same writer fed the text a character at a time (a machine handed a whole tool section at once announces its
calls before the narration between them), so one-shot and streamed output hold the same items in the text's order.
A response cut by the length limit is `incomplete` for `max_output_tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from parsers import Chunk, Delta, Message, ParserUnderTest, RequestContext

RESPONSE_ID = "resp_reference"


@dataclass
class EventWriter:
    """Deltas in, the Responses API's stream events out (as their JSON)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[int, int] = field(default_factory=dict)  # chat call index -> output index
    open_index: int | None = None
    sequence: int = 0

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.sequence += 1
        return {"type": kind, "sequence_number": self.sequence - 1, **fields}

    def _response(self, status: str, finish: str | None = None) -> dict[str, Any]:
        cut = status == "incomplete"
        return {"id": RESPONSE_ID, "object": "response", "status": status, "model": "reference",
                "output": [dict(item) for item in self.items] if status != "in_progress" else [],
                "incomplete_details": {"reason": "max_output_tokens"} if cut else None}

    def start(self) -> list[dict[str, Any]]:
        return [self._event("response.created", response=self._response("in_progress")),
                self._event("response.in_progress", response=self._response("in_progress"))]

    def _close(self) -> list[dict[str, Any]]:
        if self.open_index is None:
            return []
        index, item = self.open_index, self.items[self.open_index]
        self.open_index = None
        item["status"] = "completed"
        events = []
        if item["type"] == "message":
            part = item["content"][0]
            events += [self._event("response.output_text.done", item_id=item["id"], output_index=index,
                                   content_index=0, text=part["text"], logprobs=[]),
                       self._event("response.content_part.done", item_id=item["id"], output_index=index,
                                   content_index=0, part=dict(part))]
        elif item["type"] == "reasoning":
            events.append(self._event("response.reasoning_text.done", item_id=item["id"], output_index=index,
                                      content_index=0, text=item["content"][0]["text"]))
        else:
            events.append(self._event("response.function_call_arguments.done", item_id=item["id"],
                                      output_index=index, arguments=item["arguments"], name=item["name"]))
        return [*events, self._event("response.output_item.done", output_index=index, item=_copy(item))]

    def _open(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        events = self._close()
        self.items.append(item)
        self.open_index = len(self.items) - 1
        events.append(self._event("response.output_item.added", output_index=self.open_index, item=_copy(item)))
        if item["type"] == "message":
            events.append(self._event("response.content_part.added", item_id=item["id"], output_index=self.open_index,
                                      content_index=0, part={"type": "output_text", "text": "", "annotations": []}))
            item["content"] = [{"type": "output_text", "text": "", "annotations": []}]
        return events

    def _text(self, kind: str, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if self.open_index is None or self.items[self.open_index]["type"] != kind:
            item_id = f"{'msg' if kind == 'message' else 'rs'}_{len(self.items)}"
            item: dict[str, Any] = ({"id": item_id, "type": "message", "role": "assistant", "status": "in_progress",
                                     "content": []} if kind == "message" else
                                    {"id": item_id, "type": "reasoning", "summary": [], "status": "in_progress",
                                     "content": [{"type": "reasoning_text", "text": ""}]})
            events = self._open(item)
        item = self.items[self.open_index]  # type: ignore[index]
        item["content"][0]["text"] += text
        name = "response.output_text.delta" if kind == "message" else "response.reasoning_text.delta"
        extra = {"logprobs": []} if kind == "message" else {}
        return [*events, self._event(name, item_id=item["id"], output_index=self.open_index, content_index=0,
                                     delta=text, **extra)]

    def write(self, delta: Delta) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if delta.reasoning:
            events += self._text("reasoning", delta.reasoning)
        if delta.content:
            events += self._text("message", delta.content)
        for call in delta.tool_calls:
            if call.index not in self.calls:
                item = {"id": f"fc_{len(self.items)}", "type": "function_call", "status": "in_progress",
                        "call_id": call.id or "", "name": call.name or "", "arguments": ""}
                events += self._open(item)
                self.calls[call.index] = len(self.items) - 1
            index = self.calls[call.index]
            if call.arguments:
                if index != self.open_index:  # arguments for a call already closed: not a stream this writes
                    raise ValueError(f"arguments for call {call.index} after its item was closed")
                self.items[index]["arguments"] += call.arguments
                events.append(self._event("response.function_call_arguments.delta", item_id=self.items[index]["id"],
                                          output_index=index, delta=call.arguments))
        return events

    def end(self, finish_reason: str | None) -> list[dict[str, Any]]:
        events = self._close()
        status = "incomplete" if finish_reason == "length" else "completed"
        kind = "response.incomplete" if status == "incomplete" else "response.completed"
        return [*events, self._event(kind, response=self._response(status))]


def _copy(item: dict[str, Any]) -> dict[str, Any]:
    return {key: [dict(part) for part in value] if isinstance(value, list) else value for key, value in item.items()}


@dataclass
class _EventStream:
    session: Any  # the chat parser's stream session
    writer: EventWriter = field(default_factory=EventWriter)
    started: bool = False

    def _write(self, deltas: Sequence[Delta]) -> list[dict[str, Any]]:
        events = [] if self.started else self.writer.start()
        self.started = True
        finish = next((d.finish_reason for d in deltas if d.finish_reason), None)
        for delta in deltas:
            events += self.writer.write(delta)
        return events if finish is None else [*events, *self.writer.end(finish)]

    def feed(self, chunk: Chunk) -> list[dict[str, Any]]:
        return self._write(self.session.feed(chunk))

    def finish(self, stop: str) -> list[dict[str, Any]]:
        deltas = list(self.session.finish(stop))
        if not any(d.finish_reason for d in deltas):
            deltas.append(Delta(finish_reason=stop))
        return self._write(deltas)


@dataclass(frozen=True)
class ServedOnResponses:
    """A reference parser as a server answering on both APIs."""

    parser: ParserUnderTest

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.parser.parse(text, token_ids, context, stop)

    def open_stream(self, context: RequestContext) -> Any:
        return self.parser.open_stream(context)

    def open_response_stream(self, context: RequestContext) -> _EventStream:
        return _EventStream(self.parser.open_stream(context))

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        """The same writer fed the text a character at a time: the terminal event's response."""
        stream = self.open_response_stream(context)
        events = [event for character in text for event in stream.feed(Chunk(character))]
        return [*events, *stream.finish(stop)][-1]["response"]
