"""The reference streaming parser for Inkling: a sequence of typed content blocks.

An output is a sequence of blocks `<|message_model|>[NAME]<|content_KIND|>PAYLOAD<|end_message|>`: `thinking`
payloads are reasoning, `text` payloads content, and an `invoke_tool_json` payload is one JSON object
`{"name": …, "args": {…}}` read by the JSON block codec (`args` is the arguments; the header's NAME is metadata,
the payload's name is the call's). Whitespace and the stop token `<|content_model_end_sampling|>` between blocks
are dropped; text before any header is content.

Special tokens are recognized by their text, so quoted ones are told apart by grammar: in a text payload
`<|end_message|>` ends the block only where a block may end, i.e. before the next `<|message_model|>`, before
`<|content_model_end_sampling|>` or at the end of the output; a `<|message_model|>` inside an open block is
text (a header can only follow an end token). In a call payload the end token counts outside JSON strings.
One-shot parsing is the same machine fed a single delta.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import parsers
from fixtures.families import inkling as f
from parsers import Chunk, Delta, Family, Message, RequestContext

from .calls import Emitter, PartialCall
from .grammars.json_block import JsonBlock, JsonBlockSpec
from .scan import find_first, partial_tail

SPEC = JsonBlockSpec(open=f.INVOKE_TOOL_JSON, close=f.END_MESSAGE, argument_keys=("args",))
KINDS = {f.CONTENT_THINKING: "reasoning", f.CONTENT_TEXT: "content", f.INVOKE_TOOL_JSON: "call"}
FOLLOWERS = (f.MESSAGE_MODEL, f.END_SAMPLING)  # what may follow a block's end token


class State(Enum):
    BETWEEN = "between"  # before a header
    HEADER = "header"  # after <|message_model|>, before the content kind
    TEXT = "text"  # a reasoning or content payload
    CALL = "call"  # a call payload


class InklingMachine:
    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.state = State.BETWEEN
        self.buffer = ""
        self.kind = "content"
        self.done: list[PartialCall] = []  # calls of earlier blocks
        self.codec: JsonBlock | None = None
        self.out = Emitter.for_request(context)

    @property
    def calls(self) -> list[PartialCall]:
        return self.done + (self.codec.calls if self.codec else [])

    def _between(self, final: bool) -> bool:
        hit = find_first(self.buffer, FOLLOWERS)
        if hit is None:
            keep = 0 if final else partial_tail(self.buffer, FOLLOWERS)
            text, self.buffer = self.buffer[:len(self.buffer) - keep], self.buffer[len(self.buffer) - keep:]
            if text.strip():
                self.out.text("content", text)
            return False
        at, marker = hit
        if self.buffer[:at].strip():
            self.out.text("content", self.buffer[:at])
        self.buffer = self.buffer[at + len(marker):]
        if marker == f.MESSAGE_MODEL:
            self.state = State.HEADER
        return True

    def _header(self, final: bool) -> bool:
        hit = find_first(self.buffer, tuple(KINDS))
        if hit is None:
            if final:
                self.buffer = ""
            return False
        at, marker = hit
        self.buffer = self.buffer[at + len(marker):]
        self.kind = KINDS[marker]
        if self.kind == "call":
            self.codec, self.state = JsonBlock(SPEC), State.CALL
        else:
            self.state = State.TEXT
        return True

    def _text(self, final: bool) -> bool:
        scan = 0
        while True:
            at = self.buffer.find(f.END_MESSAGE, scan)
            if at == -1:
                keep = 0 if final else partial_tail(self.buffer, (f.END_MESSAGE,))
                self._release(len(self.buffer) - keep)
                return False
            rest = self.buffer[at + len(f.END_MESSAGE):]
            if rest.startswith(FOLLOWERS) or (final and not rest):
                self._release(at)
                self.buffer, self.state = rest, State.BETWEEN
                return True
            if not final and any(marker.startswith(rest) for marker in FOLLOWERS):  # undecided until more comes
                self._release(at)
                return False
            scan = at + len(f.END_MESSAGE)  # quoted: the end token is text

    def _release(self, upto: int) -> None:
        self.out.text(self.kind, self.buffer[:upto])
        self.buffer = self.buffer[upto:]

    def _call(self, final: bool) -> bool:
        assert self.codec is not None
        rest = self.codec.feed(self.buffer)
        self.buffer = ""
        self.out.sync(0, self.calls)
        if rest is None:
            return False
        self._close_codec(closed=True)
        self.buffer, self.state = rest, State.BETWEEN
        return True

    def _close_codec(self, closed: bool, cut: bool = False) -> None:
        """End the open block; `cut` (max_tokens ended the output in it): a call named only now and text that is
        no call are a call whose header was cut, dropped (as `Machine.finish` drops them)."""
        if self.codec is None:
            return
        named = sum(call.name is not None for call in self.codec.calls)
        if not closed:
            self.codec.finish()
        if cut:
            del self.codec.calls[named:]
            self.codec.stray = ""
        if self.codec.stray:
            self.out.text("content", self.codec.stray)
        self.done += self.codec.calls
        self.codec = None
        self.out.sync(0, self.calls)

    def _run(self, final: bool) -> None:
        step = {State.BETWEEN: self._between, State.HEADER: self._header, State.TEXT: self._text,
                State.CALL: self._call}
        while self.buffer and step[self.state](final):
            pass

    def feed(self, text: str) -> list[Delta]:
        self.buffer += text
        self._run(final=False)
        return self.out.take()

    def finish(self, stop: str) -> list[Delta]:
        self._run(final=True)
        self._close_codec(closed=False, cut=stop == "length")
        reason = "length" if stop == "length" else ("tool_calls" if self.out.calls_started else "stop")
        return [*self.out.take(), Delta(finish_reason=reason)]


class _Session:
    def __init__(self, context: RequestContext) -> None:
        self.machine = InklingMachine(context)

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.machine.feed(chunk.text)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.machine.finish(stop)


@dataclass(frozen=True)
class InklingParser:
    family: Family

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(context)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        machine = InklingMachine(context)
        return parsers.assemble([*machine.feed(text), *machine.finish(stop)])
