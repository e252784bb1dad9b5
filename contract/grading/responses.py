"""The Responses API as a surface: a server answering `POST /v1/responses`, read the way a client reads it.

An adapter whose server serves the Responses API gives its parser two more methods (`ResponsesServed`):
`respond(text, token_ids, context, stop)` returns the response object as its JSON, and
`open_response_stream(context)` a session whose `feed(chunk)` and `finish(stop)` return the stream's events as
their JSON. `ResponsesView` makes that a `ParserUnderTest`, so every check of Chat Completions applies as it is:

- one shot, the output items are the message: reasoning items' text its reasoning, message items' `output_text`
  its content, each `function_call` a tool call whose id is its `call_id`. The finish reason is what `status` says:
  "incomplete" for `max_output_tokens` is "length", else "tool_calls" where calls were made, else "stop".
- streamed, text, reasoning and argument deltas are chat deltas and an added `function_call` item its call's first
  delta; the final delta carries the terminal event's finish reason, the item layout of its response and the faults.

What only this surface can get wrong is a fault (`Message.faults`, the `responses` check): an event the OpenAI SDK's
stream state (`client.responses.stream`) rejects, a stream without its terminal event, a completed response whose
output differs from the events streamed before it, a done event whose text differs from its deltas, a call
without a `call_id` or two with the same. The item layout (`Message.items`) is compared between stream and batch.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from openai import omit
from openai._models import construct_type
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import ResponseStreamEvent

from ..cases.model import Chunk, Delta, Message, RequestContext, ToolCall, ToolCallDelta
from .assembly import assemble
from .compare import normalized

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
REASONING_DELTAS = ("response.reasoning_text.delta", "response.reasoning_summary_text.delta")
# the events whose handling by the SDK's stream state (`ResponseStreamState.handle_event`) can fail: the lifecycle
# and the items'; once the stream has started, any other event leaves its state as it was or only appends text
READ_BY_CLIENT = frozenset({"response.created", "response.queued", "response.in_progress", "response.failed",
                            "response.incomplete", "response.completed", "response.output_item.added",
                            "response.output_item.done", "response.content_part.added"})
# a delta or done event the SDK asserts lands on an item of this type (it raises otherwise); checked here, as
# handing each token's event to the SDK costs more than the server that made it
TARGETS = {"response.output_text.delta": "message", "response.output_text.done": "message",
           "response.function_call_arguments.delta": "function_call"}


def _event_classes() -> dict[str, type]:
    """The SDK's event class for each event type (constructing the one class directly costs a third of
    constructing the discriminated union, for the same object)."""
    union = typing.get_args(typing.get_args(ResponseStreamEvent)[0]) if typing.get_origin(
        ResponseStreamEvent) is typing.Annotated else typing.get_args(ResponseStreamEvent)
    return {kind: cls for cls in union for kind in typing.get_args(cls.model_fields["type"].annotation)}


EVENT_CLASSES = _event_classes()


class ResponseStreamSession(Protocol):
    def feed(self, chunk: Chunk) -> Sequence[Mapping[str, Any]]: ...

    def finish(self, stop: str) -> Sequence[Mapping[str, Any]]: ...


class ResponsesServed(Protocol):
    """A parser whose server also answers on the Responses API."""

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> Mapping[str, Any]: ...

    def open_response_stream(self, context: RequestContext) -> ResponseStreamSession: ...


def serves_responses(parser: object) -> bool:
    return callable(getattr(parser, "respond", None)) and callable(getattr(parser, "open_response_stream", None))


def _item_text(item: Mapping[str, Any]) -> str:
    """A reasoning item's text (its reasoning text, else its summary) or a message item's output text."""
    if item.get("type") == "reasoning":
        parts = item.get("content") or item.get("summary") or []
    else:
        parts = [p for p in item.get("content") or [] if p.get("type") == "output_text"]
    return "".join(p.get("text") or "" for p in parts)


def layout(items: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The output item types in order, a message whose text is blank marked so."""
    return tuple(f"{item.get('type')}" + ("(blank)" if item.get("type") == "message" and not _item_text(item).strip()
                                         else "") for item in items)


def _calls_faults(items: Sequence[Mapping[str, Any]]) -> list[str]:
    ids = [item.get("call_id") for item in items if item.get("type") == "function_call"]
    faults = [f"function_call {n} has no call_id" for n, call_id in enumerate(ids) if not call_id]
    repeated = sorted({i for i in ids if i and ids.count(i) > 1})
    return faults + [f"call_id {i!r} names {ids.count(i)} function_call items" for i in repeated]


def message_of(response: Mapping[str, Any], faults: Sequence[str] = ()) -> Message:
    """The message a response's output items make (see the module's docstring), with the faults they show."""
    items = list(response.get("output") or [])
    found = list(faults) + _calls_faults(items)
    reasoning, content, calls = [], [], []
    for n, item in enumerate(items):
        kind = item.get("type")
        if kind == "reasoning":
            reasoning.append(_item_text(item))
        elif kind == "message":
            content.append(_item_text(item))
        elif kind == "function_call":
            calls.append(ToolCall(item.get("name") or "", item.get("arguments") or "", item.get("call_id") or ""))
        else:
            found.append(f"output item {n} is a {kind!r} item, not reasoning, a message or a function_call")
    status, details = response.get("status"), response.get("incomplete_details") or {}
    if status == "incomplete" and details.get("reason") == "max_output_tokens":
        finish = "length"
    elif status == "completed":
        finish = "tool_calls" if calls else "stop"
    else:
        finish = None
        found.append(f"status {status!r} ({json.dumps(details)[:80]}): neither completed nor cut by max_output_tokens")
    return Message("".join(content), "".join(reasoning), tuple(calls), finish, layout(items), tuple(found))


@dataclass
class EventReader:
    """One streamed response: the server's events in, chat deltas out (see the module's docstring)."""

    session: ResponseStreamSession
    client: ResponseStreamState = field(  # type: ignore[type-arg]
        default_factory=lambda: ResponseStreamState(input_tools=omit, text_format=omit))
    deltas: list[Delta] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    sent: dict[int, str] = field(default_factory=dict)  # output index -> text, reasoning or arguments streamed
    calls: dict[int, int] = field(default_factory=dict)  # output index -> the call's chat index
    kinds: dict[int, str] = field(default_factory=dict)  # output index -> the type of the item added there
    terminal: Mapping[str, Any] | None = None
    count: int = 0
    rejected: bool = False

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self._read(self.session.feed(chunk))

    def finish(self, stop: str) -> Sequence[Delta]:
        deltas = self._read(self.session.finish(stop))
        if self.terminal is None:
            self.faults.append("the stream ends without response.completed or response.incomplete")
            return [*deltas, Delta(items=(), faults=tuple(self.faults))]
        final = message_of(self.terminal.get("response") or {}, self.faults)
        streamed = assemble(self.deltas)
        if normalized(streamed, keep_ids=True) != normalized(final, keep_ids=True):
            final = dataclasses.replace(final, faults=(
                *final.faults, f"{self.terminal.get('type')}'s output differs from the events streamed: "
                f"{_difference(streamed, final)}"))
        return [*deltas, Delta(finish_reason=final.finish_reason, items=final.items, faults=final.faults)]

    def _read(self, events: Sequence[Mapping[str, Any]]) -> list[Delta]:
        out: list[Delta] = []
        for event in events:
            self._client_reads(event)
            delta = self._delta(event)
            if delta is not None:
                out.append(delta)
        self.deltas += out
        return out

    def _client_reads(self, event: Mapping[str, Any]) -> None:
        """The OpenAI SDK's stream state takes the event, as `client.responses.stream` would (after a rejection
        the client has given up: later events are not handed to it)."""
        self.count += 1
        kind = event.get("type")
        if kind == "response.output_item.added":
            self.kinds[event.get("output_index")] = (event.get("item") or {}).get("type")  # type: ignore[index]
        if self.rejected or (self.count > 1 and kind not in READ_BY_CLIENT and kind not in TARGETS):
            return
        if kind in TARGETS:
            held = self.kinds.get(event.get("output_index"))  # type: ignore[arg-type]
            if held != TARGETS[kind]:
                self.rejected = True
                self.faults.append(f"the OpenAI SDK rejects event {self.count} ({kind}): it lands on output index "
                                   f"{event.get('output_index')}, which holds {f'a {held} item' if held else 'no item'}")
            return
        try:
            self.client.handle_event(construct_type(type_=EVENT_CLASSES.get(kind, ResponseStreamEvent),  # type: ignore[arg-type]
                                                    value=dict(event)))
        except Exception as exc:  # noqa: BLE001 - the client's rejection is the finding
            self.rejected = True
            self.faults.append(f"the OpenAI SDK rejects event {self.count} ({event.get('type')}): "
                               f"{type(exc).__name__}: {exc}"[:300])

    def _delta(self, event: Mapping[str, Any]) -> Delta | None:
        kind, index = event.get("type"), event.get("output_index")
        if kind in TERMINAL:
            if self.terminal is not None:
                self.faults.append(f"a second terminal event ({kind})")
            self.terminal = event
            return None
        if kind == "response.output_item.added" and (event.get("item") or {}).get("type") == "function_call":
            item = event["item"]
            self.calls[index] = len(self.calls)
            self.sent[index] = item.get("arguments") or ""
            return Delta(tool_calls=(ToolCallDelta(self.calls[index], item.get("call_id") or None, "function",
                                                   item.get("name") or None, item.get("arguments") or None),))
        if kind == "response.output_text.delta":
            return self._text(index, event.get("delta") or "", "content")
        if kind in REASONING_DELTAS:
            return self._text(index, event.get("delta") or "", "reasoning")
        if kind == "response.function_call_arguments.delta":
            return self._text(index, event.get("delta") or "", "arguments")
        if kind == "response.function_call_arguments.done":
            return self._done(index, event.get("arguments") or "", "arguments", kind)
        if kind == "response.output_item.done":
            item = event.get("item") or {}
            field_ = {"function_call": "arguments", "reasoning": "reasoning", "message": "content"}.get(item.get("type"))
            if field_ is None:
                return None
            full = item.get("arguments") or "" if field_ == "arguments" else _item_text(item)
            return self._done(index, full, field_, f"output_item.done ({item.get('type')})")
        return None

    def _text(self, index: int | None, text: str, field_: str) -> Delta | None:
        if index is None or not text:
            return None
        self.sent[index] = self.sent.get(index, "") + text
        if field_ == "arguments":
            if index not in self.calls:
                self.faults.append(f"arguments streamed for output index {index}, which holds no function_call")
                return None
            return Delta(tool_calls=(ToolCallDelta(self.calls[index], arguments=text),))
        return Delta(**{field_: text})

    def _done(self, index: int | None, full: str, field_: str, what: str) -> Delta | None:
        """A done event carries the whole text: what its deltas did not send yet is sent now; a text that
        contradicts them is a fault."""
        if index is None:
            return None
        sent = self.sent.get(index, "")
        if full == sent:
            return None
        if not full.startswith(sent):
            self.faults.append(f"{what} at output index {index} carries {full[:80]!r}, its deltas sent {sent[:80]!r}")
            return None
        return self._text(index, full[len(sent):], field_)


def _difference(streamed: Message, final: Message) -> str:
    a, b = normalized(streamed, keep_ids=True), normalized(final, keep_ids=True)
    return "; ".join(f"{key}: streamed {json.dumps(a[key], ensure_ascii=False)[:100]} vs completed "
                     f"{json.dumps(b[key], ensure_ascii=False)[:100]}" for key in a if a[key] != b[key])


@dataclass(frozen=True)
class ResponsesView:
    """A parser's server answering on the Responses API, as the `ParserUnderTest` the checks grade."""

    served: Any  # a ResponsesServed

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return message_of(self.served.respond(text, token_ids, context, stop))

    def open_stream(self, context: RequestContext) -> EventReader:
        return EventReader(self.served.open_response_stream(context))
