"""One call per block with XML parameters: OPEN <function=N> (<parameter=K> RAW </parameter>)* </function> CLOSE.

Qwen3-Coder / Qwen3.5 / Seed-OSS style. Values are raw text with one leading and one trailing
newline stripped, typed by the declared schema. Arguments stream as a growing JSON object: a
string value character by character, other values once complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum

from parsers import RequestContext

from ..calls import PartialCall
from ..values import convert, declared_type, streams_as_string
from .stepper import MarkerStepper, not_a_name, not_a_start


@dataclass(frozen=True)
class XmlFunctionSpec:
    close: str
    function: str = "<function="
    function_end: str = "</function>"
    parameter: str = "<parameter="
    parameter_end: str = "</parameter>"
    padding: str = "\n"  # framing dropped once on each side of a value ("" for unpadded values, Seed-OSS)


class _At(Enum):
    BEFORE = 0  # waiting for <function=
    NAME = 1
    PARAMETERS = 2
    KEY = 3
    VALUE = 4
    AFTER = 5  # after </function>, waiting for CLOSE


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class XmlFunction(MarkerStepper):
    """One block; `bare`: opened by `<function=` itself (a call without its wrapper), ending at `</function>`."""

    def __init__(self, spec: XmlFunctionSpec, context: RequestContext, bare: bool = False) -> None:
        self.spec = spec
        self.context = context
        self.bare = bare
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.at = _At.NAME if bare else _At.BEFORE
        self.buffer = ""
        self.text = ""  # the name, key or value being read (before the first call: whitespace held back)
        self.key = ""
        self.kind: str | None = None
        self.count = 0  # parameters written so far
        self.value_open = False  # a string value's opening quote has been written
        self._written = 0  # characters of the current string value written

    def _markers(self) -> tuple[str, ...]:
        s = self.spec
        return {
            _At.BEFORE: (s.function, s.close),
            _At.NAME: (">",),
            _At.PARAMETERS: (s.parameter, s.function_end, s.close),
            _At.KEY: (">",),
            _At.VALUE: (s.parameter_end, s.parameter, s.function_end),
            _At.AFTER: (s.close,),
        }[self.at]

    @property
    def _call(self) -> PartialCall:
        return self.calls[-1]

    def _stream_value(self, final: bool) -> None:
        """Write as much of a string value as is certain: not a trailing newline, not a prefix of null."""
        if not streams_as_string(self.kind):
            return
        text = self.text
        pad = self.spec.padding
        start = len(pad) if pad and text.startswith(pad) else 0
        end = len(text)
        if not final:
            if len(text) <= start + 6 and "null".startswith(text[start:].strip().lower()):
                return
            end -= len(pad) if pad and text.endswith(pad) else 0
        if not self.value_open:
            self._call.arguments += '"'
            self.value_open = True
            self._written = 0
        self._call.arguments += _escaped(text[start + self._written : end])
        self._written = max(self._written, end - start)

    def _end_value(self) -> None:
        pad = self.spec.padding
        value = self.text.removeprefix(pad).removesuffix(pad) if pad else self.text
        if self.value_open:
            self._call.arguments += _escaped(value[self._written :]) + '"'
        else:
            self._call.arguments += json.dumps(convert(value, self.kind), ensure_ascii=False)
        self.value_open, self.text = False, ""
        self.count += 1
        self.at = _At.PARAMETERS

    def _begin_value(self) -> None:
        assert self._call.name is not None
        self.key, self.text = self.text.strip(), ""
        self.kind = declared_type(self.context, self._call.name, self.key)
        if self.kind is None and self.context.tool(self._call.name) is not None:
            self.kind = "string"  # undeclared keys of a declared tool stay strings
        self._call.arguments += (", " if self.count else "") + json.dumps(self.key, ensure_ascii=False) + ": "
        self.at = _At.VALUE

    def _give_back(self) -> str | None:
        """Text after the opener that cannot begin `<function=` (prose), or a name no tool has (markup swallowed
        by a head missing its `>`): no call; handed back without the markers read so far."""
        if self.at is _At.BEFORE and not_a_start(self.text + self.buffer, self._markers()):
            return self.text + self.buffer
        if self.at is _At.NAME and not_a_name(self.text + self._upcoming()):
            return self.text + self.buffer
        return None

    def _waiting(self) -> None:
        if self.at is _At.VALUE:
            self._stream_value(final=False)

    def _on(self, marker: str) -> bool:
        s = self.spec
        if self.at is _At.BEFORE:
            if marker == s.close:
                return True
            self.at, self.text = _At.NAME, ""
        elif self.at is _At.NAME:
            self.calls.append(PartialCall(name=self.text.strip(), arguments="{"))
            self.at, self.text, self.count = _At.PARAMETERS, "", 0
        elif self.at is _At.KEY:
            self._begin_value()
        elif self.at is _At.VALUE:
            self._end_value()
            if marker == s.parameter:
                self.at = _At.KEY
            elif marker == s.function_end:
                self._call.arguments += "}"
                self.at = _At.AFTER
                return self.bare
        elif self.at is _At.PARAMETERS:
            if marker == s.parameter:
                self.at, self.text = _At.KEY, ""
            elif marker == s.function_end:
                self._call.arguments += "}"
                self.at = _At.AFTER
                return self.bare
            else:
                self._call.arguments += "}"
                return True
        elif self.at is _At.AFTER:
            return True
        return False

    def _absorb(self, text: str) -> None:
        if self.at in (_At.BEFORE, _At.NAME, _At.KEY, _At.VALUE):
            self.text += text
        elif text.strip():
            self.stray += text

    def finish(self) -> None:
        self._absorb(self.buffer)
        self.buffer = ""
        if self.at is _At.BEFORE and self.text.strip():
            self.stray += self.text
        elif self.at is _At.VALUE:
            self._stream_value(final=True)
        elif self.at is _At.PARAMETERS:
            self._call.arguments += "}"
        elif self.at is _At.NAME:
            self.stray += self.spec.function + self.text
