"""Calls as a grammar sees them while text streams in, and the deltas that announce them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from parsers import Delta, RequestContext, ToolCallDelta


@dataclass
class PartialCall:
    """A call being parsed. `arguments` only ever grows (the stream has already shown its prefix)."""

    name: str | None = None
    id: str | None = None  # a native id from the model text
    arguments: str = ""


@dataclass
class TrimmedArguments:
    """Streams argument text into a call without its surrounding whitespace: leading whitespace is
    dropped, trailing whitespace waits until more text follows (it may be all that precedes the end)."""

    pending: str = ""

    def add(self, call: PartialCall, text: str) -> None:
        if not call.arguments:
            text = text.lstrip()
        body = text.rstrip()
        if body:
            call.arguments += self.pending + body
            self.pending = text[len(body) :]
        else:
            self.pending += text


@dataclass
class Emitter:
    """Collects what the machine releases, merging neighbours into few OpenAI deltas."""

    deltas: list[Delta] = field(default_factory=list)
    calls_started: int = 0
    limit: int | None = None  # most calls announced: later ones are dropped whole
    _shown: dict[int, int] = field(default_factory=dict)  # call index -> argument chars sent

    @classmethod
    def for_request(cls, context: RequestContext) -> Emitter:
        """`parallel_tool_calls` false: the first call alone is returned (as vLLM's and lmdeploy's servers do)."""
        return cls(limit=None if context.parallel_tool_calls else 1)

    def text(self, kind: str, text: str) -> None:
        if not text:
            return
        last = self.deltas[-1] if self.deltas else None
        if kind == "content":
            if last and last.content is not None and not last.tool_calls and last.reasoning is None:
                self.deltas[-1] = Delta(content=last.content + text)
            else:
                self.deltas.append(Delta(content=text))
        elif last and last.reasoning is not None and not last.tool_calls and last.content is None:
            self.deltas[-1] = Delta(reasoning=last.reasoning + text)
        else:
            self.deltas.append(Delta(reasoning=text))

    def sync(self, base: int, calls: list[PartialCall]) -> None:
        """Announce calls whose name is known and send argument text not sent yet."""
        for offset, call in enumerate(calls):
            index = base + offset
            if call.name is None or (self.limit is not None and index >= self.limit):
                return  # a call is announced only after every earlier one
            if index not in self._shown:
                call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
                self.deltas.append(Delta(tool_calls=(ToolCallDelta(index, call_id, "function", call.name, ""),)))
                self._shown[index] = 0
                self.calls_started = max(self.calls_started, index + 1)
            sent = self._shown[index]
            if len(call.arguments) > sent:
                self.deltas.append(Delta(tool_calls=(ToolCallDelta(index, arguments=call.arguments[sent:]),)))
                self._shown[index] = len(call.arguments)

    def take(self) -> list[Delta]:
        out, self.deltas = self.deltas, []
        return out


def not_a_call(text: str, can_begin: str) -> bool | None:
    """Read after a start marker (tool.false_start): True when the first non-space character cannot
    begin a call (`can_begin` lists the characters that can, e.g. `{` or `[{`), False when it can,
    None while only whitespace has arrived (hold it). A codec that gets True ends its section and
    returns the text it read, without the start marker, from `feed`: the machine reads it on as
    content, so a real call later in it is still found (or it puts the text in `stray`, returns "").
    """
    head = text.lstrip()
    if not head:
        return None
    return head[0] not in can_begin
