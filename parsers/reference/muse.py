"""The reference streaming parser for Muse (Spark, Glimmer): recipient-addressed messages holding ATEM calls.

An output is a sequence of messages `[<|start|>assistant] to=RECIPIENT<|message|>BODY` ended by `<|eom|>` or
`<|eot|>`; the first has no `<|start|>` (the prompt ends `<|start|>assistant`). `self` bodies are reasoning;
`user` and `commentary` bodies (and a header without recipient) are content; any other recipient is a tool,
whose body is one `<atem:function_calls>` block read by the XML invoke codec (values typed by the schema).
A doubled namespace `NAME.NAME` (the template advertises a bare tool as the recipient `NAME.*`) names the
declared `NAME`.

Special tokens are recognized by their text, so quoted ones are told apart by grammar: in a text body a
terminator counts only where the grammar lets a message end, i.e. before the next `<|start|>` or at the end
of the output; a `<|start|>` always opens the next message (a body whose `<|eom|>` never came ends there).
One-shot parsing is the same machine fed a single delta.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import parsers
from fixtures.families import muse as f
from parsers import Chunk, Delta, Family, Message, RequestContext

from .calls import Emitter, PartialCall
from .grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from .scan import find_first, partial_tail

TERMINATORS = (f.EOM, f.EOT)
SPEC = XmlInvokeSpec(ends=(f.END_FUNCTION_CALLS,), invoke=f.INVOKE, invoke_end=f.END_INVOKE,
                     parameter=f.PARAMETER, parameter_end=f.END_PARAMETER)
_RECIPIENT = re.compile(r"(?:^|\s)to=([^\s<]+)")
TEXT_RECIPIENTS = {"self": "reasoning", "user": "content", "commentary": "content", None: "content"}


def _declared(context: RequestContext, name: str) -> str:
    """A doubled namespace `NAME.NAME` names the declared `NAME` (the template advertises it as `NAME.*`)."""
    head, dot, tail = name.partition(".")
    if dot and head == tail and context.tool(name) is None and context.tool(head) is not None:
        return head
    return name


class _Atem(XmlInvoke):
    """The XML invoke codec with the call's name resolved before its values are typed by the schema."""

    def _open_call(self) -> None:
        super()._open_call()
        self.calls[-1].name = _declared(self.context, self.calls[-1].name or "")


class State(Enum):
    HEADER = "header"
    TEXT = "text"  # a reasoning or content body
    CALL = "call"  # a tool body before and inside its ATEM block
    AFTER = "after"  # a tool body after its block, up to the terminator


class MuseMachine:
    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.state = State.HEADER
        self.buffer = ""
        self.kind = "content"
        self.done: list[PartialCall] = []  # calls of earlier tool messages
        self.codec: XmlInvoke | None = None
        self.opened = False  # the current tool body has shown its <atem:function_calls>
        self.out = Emitter.for_request(context)

    @property
    def calls(self) -> list[PartialCall]:
        return self.done + (self.codec.calls if self.codec else [])

    def _sync(self) -> None:
        self.out.sync(0, self.calls)

    def _header(self, final: bool) -> bool:
        at = self.buffer.find(f.MESSAGE)
        if at == -1:
            if final and "<|" not in self.buffer:
                self.out.text("content", self.buffer)
                self.buffer = ""
            return False
        header, self.buffer = self.buffer[:at], self.buffer[at + len(f.MESSAGE):]
        found = _RECIPIENT.search(header)
        recipient = found.group(1) if found else None
        if recipient in TEXT_RECIPIENTS:
            self.kind, self.state = TEXT_RECIPIENTS[recipient], State.TEXT
        else:
            self._close_codec()
            self.codec, self.opened, self.state = _Atem(SPEC, self.context), False, State.CALL
        return True

    def _text(self, final: bool) -> bool:
        scan = 0
        markers = (*TERMINATORS, f.START)
        while True:
            hit = find_first(self.buffer, markers, scan)
            if hit is None:
                keep = 0 if final else partial_tail(self.buffer, markers)
                self._release(len(self.buffer) - keep)
                return False
            at, marker = hit
            if marker == f.START:
                self._release(at)
                self.state = State.HEADER
                return True
            rest = self.buffer[at + len(marker):]
            if rest.startswith(f.START) or (final and not rest):
                self._release(at)
                self.buffer, self.state = rest, State.HEADER
                return True
            if not final and f.START.startswith(rest):  # undecided until more text comes
                self._release(at)
                return False
            scan = at + len(marker)  # quoted: the terminator is text

    def _release(self, upto: int) -> None:
        self.out.text(self.kind, self.buffer[:upto])
        self.buffer = self.buffer[upto:]

    def _call(self, final: bool) -> bool:
        assert self.codec is not None
        if not self.opened:
            at = self.buffer.find(f.FUNCTION_CALLS)
            if at == -1:
                return self._after(final)
            self.buffer, self.opened = self.buffer[at + len(f.FUNCTION_CALLS):], True
        rest = self.codec.feed(self.buffer)
        self.buffer = ""
        self._sync()
        if rest is None:
            return False
        self.buffer, self.state = rest, State.AFTER
        return True

    def _after(self, final: bool) -> bool:
        """Skip the rest of a tool body up to its terminator or the next header."""
        hit = find_first(self.buffer, (*TERMINATORS, f.START))
        if hit is None:
            keep = 0 if final else partial_tail(self.buffer, (*TERMINATORS, f.START, f.FUNCTION_CALLS))
            self.buffer = self.buffer[len(self.buffer) - keep:]
            return False
        at, marker = hit
        self.buffer = self.buffer[at if marker == f.START else at + len(marker):]
        self._close_codec()
        self.state = State.HEADER
        return True

    def _close_codec(self) -> None:
        if self.codec is not None:
            if self.state is State.CALL and self.opened:
                self.codec.finish()
            self.done += self.codec.calls
            self.codec = None
            self._sync()

    def _run(self, final: bool) -> None:
        step = {State.HEADER: self._header, State.TEXT: self._text, State.CALL: self._call,
                State.AFTER: self._after}
        while self.buffer and step[self.state](final):
            pass

    def feed(self, text: str) -> list[Delta]:
        self.buffer += text
        self._run(final=False)
        return self.out.take()

    def finish(self, stop: str) -> list[Delta]:
        self._run(final=True)
        self._close_codec()
        reason = "length" if stop == "length" else ("tool_calls" if self.out.calls_started else "stop")
        return [*self.out.take(), Delta(finish_reason=reason)]


class _Session:
    def __init__(self, context: RequestContext) -> None:
        self.machine = MuseMachine(context)

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.machine.feed(chunk.text)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.machine.finish(stop)


@dataclass(frozen=True)
class MuseParser:
    family: Family

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(context)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        machine = MuseMachine(context)
        return parsers.assemble([*machine.feed(text), *machine.finish(stop)])
