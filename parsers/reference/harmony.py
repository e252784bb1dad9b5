"""The reference streaming parser for Harmony (gpt-oss): messages on channels, read from text.

An output is a sequence of messages `[<|start|>ROLE]HEADER<|message|>BODY` ended by `<|end|>`,
`<|call|>` or `<|return|>`; the first has no `<|start|>` (the prompt ends `<|start|>assistant`).
The header names the channel and, for a call, the recipient `to=functions.NAME` (before or after
the channel). Bodies go to reasoning (analysis), to a call's arguments (any recipient) or to content
(commentary preambles, final, anything else).

Special tokens are recognized by their text, so quoted markers are told apart by grammar: in a
call body a terminator counts only outside JSON strings; in a text body only where the grammar lets
a message end, i.e. before the next message (`<|start|>`, or a bare `<|channel|>`, maybe after
whitespace) or at the end of the output. A `<|start|>` in a text body opens the next message even
without a terminator before it, as a model that leaves out `<|end|>` writes. One-shot parsing is the
same machine fed a single delta.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import parsers
from parsers import Chunk, Delta, Family, Message, RequestContext

from .calls import Emitter, PartialCall
from .scan import JsonStrings, find_first, partial_tail

START, CHANNEL, MESSAGE, CONSTRAIN = "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"
TERMINATORS = ("<|end|>", "<|call|>", "<|return|>")
STRAYS = (CONSTRAIN,)  # header markers that mean nothing inside a text body
NEXT = (START, CHANNEL)  # what may follow a message's terminator (besides the end of the output)
_RECIPIENT = re.compile(r"(?:^|\s)to=([^\s<]+)")


@dataclass(frozen=True)
class Header:
    channel: str | None
    recipient: str | None

    @classmethod
    def parse(cls, text: str) -> Header:
        """`[<|start|>]ROLE[ to=R]<|channel|>CHANNEL[ to=R][ [<|constrain|>]TYPE]` (every part optional)."""
        role_part, _, rest = text.removeprefix(START).partition(CHANNEL)
        channel_part = rest.partition(CONSTRAIN)[0]
        found = _RECIPIENT.search(role_part) or _RECIPIENT.search(channel_part)
        words = _RECIPIENT.sub(" ", channel_part).split()
        return cls(words[0] if words else None, found.group(1) if found else None)


class State(Enum):
    HEADER = "header"
    TEXT = "text"  # a reasoning or content body
    CALL = "call"  # a call's arguments


class HarmonyMachine:
    def __init__(self, context: RequestContext) -> None:
        self.state = State.HEADER
        self.buffer = ""
        self.kind = "content"  # where the open text body goes: "reasoning" or "content"
        self.calls: list[PartialCall] = []
        self.strings = JsonStrings()
        self.out = Emitter.for_request(context)

    def _open(self, header: Header) -> None:
        if header.recipient:
            self.calls.append(PartialCall(name=header.recipient.removeprefix("functions.")))
            self.strings = JsonStrings()
            self.state = State.CALL
        else:
            self.kind = "reasoning" if header.channel == "analysis" else "content"
            self.state = State.TEXT

    def _header(self, final: bool) -> bool:
        """Wait for `<|message|>`; True when a body opened. An unfinished header at the end is markup,
        unless it holds no marker at all (plain text from a model that ignored the format)."""
        at = self.buffer.find(MESSAGE)
        if at == -1:
            if final and "<|" not in self.buffer:
                self.out.text("content", self.buffer)
                self.buffer = ""
            return False
        header, self.buffer = self.buffer[:at], self.buffer[at + len(MESSAGE) :]
        self._open(Header.parse(header))
        self._sync()
        return True

    def _text(self, final: bool) -> bool:
        """Release body text up to a real terminator; True when the message ended. A `<|start|>` ends the
        message too: the next one opens where a model left out the terminator (`<|end|>` missing). A stray
        header marker (`<|constrain|>`) means nothing in a content body: dropped (in reasoning, markup is
        text the model thinks about, as the machine keeps strays in reasoning)."""
        scan = 0
        markers = (*TERMINATORS, START, *STRAYS) if self.kind == "content" else (*TERMINATORS, START)
        while True:
            hit = find_first(self.buffer, markers, scan)
            if hit is None:
                keep = 0 if final else partial_tail(self.buffer, markers)
                self._release(len(self.buffer) - keep)
                return False
            at, marker = hit
            if marker == START:
                self._release(at)
                self.state = State.HEADER
                return True
            if marker in STRAYS:
                self._release(at)
                self.buffer, scan = self.buffer[len(marker) :], 0
                continue
            rest = self.buffer[at + len(marker) :]
            ahead = rest.lstrip()  # whitespace between two messages belongs to neither
            if ahead.startswith(NEXT) or (final and not ahead):
                self._release(at)
                self.buffer, self.state = rest, State.HEADER
                return True
            if not final and any(n.startswith(ahead) for n in NEXT):  # undecided until more text comes
                self._release(at)
                return False
            scan = at + len(marker)  # quoted: the terminator is text

    def _release(self, upto: int) -> None:
        self.out.text(self.kind, self.buffer[:upto])
        self.buffer = self.buffer[upto:]

    def _call(self, final: bool) -> bool:
        """Append argument text up to a terminator outside JSON strings; True when the call ended."""
        call = self.calls[-1]
        at, marker = self.strings.find_outside(self.buffer, TERMINATORS)
        if marker is None and not final:
            call.arguments += self.buffer[:at]
            self.buffer = self.buffer[at:]
            self._sync()
            return False
        end = len(self.buffer) if marker is None else at
        call.arguments += self.buffer[:end]
        if not call.arguments.strip():  # an empty body: no arguments (text already streamed stays)
            call.arguments += "{}"
        self.buffer = "" if marker is None else self.buffer[at + len(marker) :]
        self.state = State.HEADER
        self._sync()
        return marker is not None

    def _sync(self) -> None:
        self.out.sync(0, self.calls)

    def _run(self, final: bool) -> None:
        step = {State.HEADER: self._header, State.TEXT: self._text, State.CALL: self._call}
        while self.buffer and step[self.state](final):
            pass

    def feed(self, text: str) -> list[Delta]:
        self.buffer += text
        self._run(final=False)
        return self.out.take()

    def finish(self, stop: str) -> list[Delta]:
        self._run(final=True)
        if self.state is State.CALL:  # cut before <|call|>: the call is complete as it stands
            self._call(final=True)
        reason = "length" if stop == "length" else ("tool_calls" if self.out.calls_started else "stop")
        return [*self.out.take(), Delta(finish_reason=reason)]


class _Session:
    def __init__(self, context: RequestContext) -> None:
        self.machine = HarmonyMachine(context)

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.machine.feed(chunk.text)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.machine.finish(stop)


@dataclass(frozen=True)
class HarmonyParser:
    family: Family

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(context)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        """One shot is the same machine fed a single delta."""
        machine = HarmonyMachine(context)
        return parsers.assemble([*machine.feed(text), *machine.finish(stop)])
