"""One call per block as a name and key/value tag pairs: OPEN NAME (<arg_key>K</arg_key> <arg_value>V</arg_value>)* CLOSE.

GLM-4.5/4.6 (newline-separated), GLM-4.7/5 (compact) and K2 Horizon (`<ifm|…>` tags, an optional
`<ifm|arg_type>` between key and value) write this; whitespace between tags is
framing, so one spec reads both. Values are raw text (strings as written, other types as JSON)
typed by the declared schema; a value ends only at its own end tag, so other markers inside it
are text. A value cut by the end of the stream is closed as it stands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum

from parsers import RequestContext

from ..calls import PartialCall
from ..values import declared_type
from .raw_value import RawValue
from .stepper import MarkerStepper, not_a_name


@dataclass(frozen=True)
class ArgPairsSpec:
    open: str  # the marker that opened the block (for text that turns out to be no call)
    close: str
    key: str = "<arg_key>"
    key_end: str = "</arg_key>"
    value: str = "<arg_value>"
    value_end: str = "</arg_value>"
    name_end: tuple[str, ...] = ("\n",)  # what ends a name besides the first key and CLOSE
    type: str = ""  # an optional type tag between a key and its value (K2 Horizon's `<ifm|arg_type>`); "" for none
    type_end: str = ""


class _At(Enum):
    NAME = 0
    PAIRS = 1  # between pairs
    KEY = 2
    BEFORE_VALUE = 3
    VALUE = 4
    NAMELESS = 5  # arguments without a name: the block is kept as text
    TYPE = 6  # inside a type tag: the schema types the value, the tag's text is dropped


class ArgPairs(MarkerStepper):
    def __init__(self, spec: ArgPairsSpec, context: RequestContext) -> None:
        self.spec = spec
        self.context = context
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.at = _At.NAME
        self.buffer = ""
        self.text = ""  # the name or key being read
        self.count = 0  # pairs written so far
        self.value: RawValue | None = None

    def _markers(self) -> tuple[str, ...]:
        s = self.spec
        return {
            _At.NAME: (s.key, s.close, *s.name_end),
            _At.PAIRS: (s.key, s.close),
            _At.KEY: (s.key_end,),
            _At.BEFORE_VALUE: (s.value, s.key, s.close, *((s.type,) if s.type else ())),
            _At.VALUE: (s.value_end,),
            _At.NAMELESS: (s.close,),
            _At.TYPE: (s.type_end,),
        }[self.at]

    def _start_call(self) -> None:
        self.calls.append(PartialCall(name=self.text.strip(), arguments="{"))
        self.at, self.text = _At.PAIRS, ""

    def _begin_value(self) -> None:
        call = self.calls[-1]
        assert call.name is not None
        kind = declared_type(self.context, call.name, self.text)
        if kind is None and self.context.tool(call.name) is not None:
            kind = "string"  # undeclared keys of a declared tool stay strings
        call.arguments += (", " if self.count else "") + json.dumps(self.text, ensure_ascii=False) + ": "
        self.value = RawValue(call, kind)
        self.at = _At.VALUE

    def _end_object(self) -> None:
        if self.value is not None:
            self.value.close()
            self.value = None
        if self.calls:
            self.calls[-1].arguments += "}"

    def _on(self, marker: str) -> bool:
        """Handle a marker; True when the block has ended."""
        s = self.spec
        if self.at is _At.NAME:
            if marker in s.name_end and marker not in (s.key, s.close):
                if self.text.strip():
                    self._start_call()
                return False
            if not self.text.strip():
                if marker == s.close:
                    return True  # an empty block: no call
                self.at, self.stray = _At.NAMELESS, self.stray + s.open + self.text + marker
                return False
            self._start_call()
        if self.at is _At.NAMELESS:
            self.stray += marker
            return True
        if marker == s.close:
            self._end_object()
            return True
        if self.at is _At.BEFORE_VALUE and s.type and marker == s.type:
            self.at = _At.TYPE
        elif self.at is _At.TYPE:
            self.at = _At.BEFORE_VALUE
        elif self.at is _At.PAIRS or (self.at is _At.BEFORE_VALUE and marker == s.key):
            self.at, self.text = _At.KEY, ""
        elif self.at is _At.KEY:
            self.at, self.text = _At.BEFORE_VALUE, self.text.strip()
        elif self.at is _At.BEFORE_VALUE:
            self._begin_value()
        elif self.at is _At.VALUE:
            assert self.value is not None
            self.value.close()
            self.value, self.count, self.at = None, self.count + 1, _At.PAIRS
        return False

    def _give_back(self) -> str | None:
        """Prose after the opener (`<tool_call>No tool is needed.`), or a name that swallowed markup: no call;
        the text after the opener is handed back as content."""
        if self.at is _At.NAME and not self.calls and not_a_name(self.text + self._upcoming()):
            return self.text + self.buffer
        return None

    def _absorb(self, text: str) -> None:
        if self.at in (_At.NAME, _At.KEY):
            self.text += text
        elif self.at is _At.VALUE:
            assert self.value is not None
            self.value.grow(text)
        elif self.at is _At.TYPE:
            pass  # the declared schema types the value
        elif self.at is _At.NAMELESS or text.strip():
            self.stray += text

    def finish(self) -> None:
        self._absorb(self.buffer)
        self.buffer = ""
        if self.at is _At.NAME and self.text.strip():
            self._start_call()
        if self.at is not _At.NAMELESS:
            self._end_object()


class _Block(ArgPairs):
    """One call block of a section: its calls go to the section's list, after the calls already in it."""

    def __init__(self, spec: ArgPairsSpec, context: RequestContext, calls: list[PartialCall]) -> None:
        super().__init__(spec, context)
        self.calls = calls
        self.first = len(calls)

    def _end_object(self) -> None:
        if len(self.calls) > self.first:
            super()._end_object()


class ArgPairsSection:
    """A section of call blocks (Hy3's `<tool_calls>` around `<tool_call>` blocks): whitespace between blocks is
    framing; text that begins neither a block nor the section end is no call, handed back as content."""

    def __init__(self, spec: ArgPairsSpec, end: str, context: RequestContext) -> None:
        self.spec = spec
        self.end = end
        self.context = context
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.block: _Block | None = None
        self.buffer = ""

    def _take_stray(self) -> None:
        assert self.block is not None
        self.stray += self.block.stray
        self.block.stray = ""

    def feed(self, text: str) -> str | None:
        self.buffer += text
        while True:
            if self.block is not None:
                text, self.buffer = self.buffer, ""
                rest = self.block.feed(text)
                self._take_stray()
                if rest is None:
                    return None
                self.block, self.buffer = None, rest
                continue
            head = self.buffer.lstrip()
            if head.startswith(self.spec.open):
                self.buffer = head[len(self.spec.open):]
                self.block = _Block(self.spec, self.context, self.calls)
                continue
            if head.startswith(self.end):
                self.buffer = ""
                return head[len(self.end):]
            if not head or self.spec.open.startswith(head) or self.end.startswith(head):
                return None
            self.buffer = ""
            return head  # prose after the section start: no call

    def finish(self) -> None:
        if self.block is not None:
            self.block.finish()
            self._take_stray()
