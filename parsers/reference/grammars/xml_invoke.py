"""A section of XML invoke calls: ( INVOKE NAME"> ( PARAMETER KEY"[ attrs]> VALUE PARAMETER_END )* INVOKE_END )+ END.

DeepSeek DSML (V3.2 / V4), MiniMax-M2 and Step-3 write calls this way; an `XmlInvokeSpec` gives the
spellings. Values are raw text. Where the spec has a `string="true|false"` attribute (DSML) it decides:
`true` keeps the text verbatim, `false` reads a JSON literal; otherwise (or when the attribute is
missing) the declared schema types the value. Arguments stream as a growing JSON object: a string
value character by character, other values once complete. A missing PARAMETER_END or INVOKE_END is
recovered at the next tag; a self-closing `INVOKE NAME"/>` is a call without arguments.

Kimi K3 XTML ends heads with `<|sep|>` instead of `>` (`head_end`), types each value by a `type="…"`
attribute (`string` verbatim, anything else a JSON literal), escapes `&` and `"` in attribute values, and
holds arguments that are no JSON object as the raw text of one `json` element (`json_block`).
recovered at the next tag; a self-closing `INVOKE NAME"/>` is a call without arguments. Where the spec allows
CDATA (MiniCPM5), a value opening with `<![CDATA[` is read verbatim up to `]]>`, tags included. A bare section
(MiniCPM5, whose calls have no wrapper) is opened by the invoke marker itself and ends with its INVOKE_END.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum

from parsers import RequestContext

from ..calls import PartialCall
from ..values import convert, declared_type, streams_as_string
from .gap import Gap
from .stepper import MarkerStepper, not_a_name, not_a_start

_STRING_FLAG = re.compile(r'\bstring\s*=\s*"(true|false)"')
_TYPE = re.compile(r'\btype\s*=\s*"([^"]*)"')


@dataclass(frozen=True)
class XmlInvokeSpec:
    ends: tuple[str, ...]  # markers that close the section
    invoke: str  # up to the name's opening quote: `<invoke name="`
    invoke_end: str
    parameter: str  # up to the key's opening quote: `<parameter name="`
    parameter_end: str
    wrappers: tuple[str, ...] = ()  # per-call markup around an invoke, skipped (Step-3)
    string_flag: bool = False  # a `string="true|false"` attribute says how to read the value
    nulls: tuple[str, ...] = ("null",)  # schema-typed values meaning null, lower case
    head_end: str = ">"  # ends an invoke or parameter head
    type_attribute: bool = False  # a `type="…"` attribute: `string` (or none) is raw text, others JSON
    attribute_entities: bool = False  # names and keys escape `&` and `"` as `&amp;` and `&quot;`
    json_block: str = ""  # an element in an invoke whose text is the whole arguments, verbatim (K3)
    json_block_end: str = ""
    cdata: bool = False  # a value may be `<![CDATA[…]]>`, read verbatim
    json_body: bool = False  # an invoke whose body opens with `{` holds its arguments as one JSON object (V3.2)


CDATA, END_CDATA = "<![CDATA[", "]]>"


class _At(Enum):
    BETWEEN = 0  # between invokes, waiting for the next one or the section end
    NAME = 1  # inside an invoke head, up to `>`
    BODY = 2  # inside an invoke, between parameters
    KEY = 3  # inside a parameter head, up to `>`
    VALUE = 4
    JSON = 5  # inside a json_block element


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class _Value:
    """One value written into its call's arguments: verbatim text, a JSON literal, or typed by the schema."""

    def __init__(self, call: PartialCall, kind: str | None, flag: str | None, nulls: tuple[str, ...]) -> None:
        self.call = call
        self.kind = kind
        self.flag = flag  # "true", "false" or None (no attribute: typed by the schema)
        self.nulls = nulls
        self.text = ""
        self.open = False  # the JSON string's opening quote has been written
        self.written = 0
        self.cdata = False  # inside `<![CDATA[`, before its `]]>`
        self.cdata_done = False  # a CDATA section was read: the value is complete

    def _streams(self) -> bool:
        """Whether the text so far may be written: raw strings are, unless they could still be a null word."""
        if self.flag is not None:
            return self.flag == "true"
        if not streams_as_string(self.kind):
            return False
        head = self.text.strip().lower()
        return self.open or len(self.text) > 8 or not any(word.startswith(head) for word in self.nulls)

    def grow(self, text: str) -> None:
        self.text += text
        if not self._streams():
            return
        if not self.open:
            self.call.arguments += '"'
            self.open = True
        self.call.arguments += _escaped(self.text[self.written :])
        self.written = len(self.text)

    def _typed(self) -> object:
        if self.flag == "false":
            try:
                return json.loads(self.text)
            except ValueError:
                return convert(self.text, self.kind)
        if self.kind != "string" and self.text.strip().lower() in self.nulls:
            return None
        return convert(self.text, self.kind)

    def close(self) -> None:
        if self.open:
            self.call.arguments += _escaped(self.text[self.written :]) + '"'
        else:
            self.call.arguments += json.dumps(self._typed(), ensure_ascii=False)


class XmlInvoke(MarkerStepper):
    def __init__(self, spec: XmlInvokeSpec, context: RequestContext, bare: bool = False) -> None:
        self.spec = spec
        self.context = context
        self.bare = bare  # opened by the invoke marker itself: one call, ended by its INVOKE_END
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.gap = Gap()  # text outside invokes and parameters since the last marker
        self.at = _At.BETWEEN
        self.buffer = ""
        self.head = ""  # the invoke or parameter head being read
        self.value: _Value | None = None
        self.count = 0  # parameters written into the current call
        self.lead = ""  # whitespace after the section opener, held until a marker shows a call follows
        self.started = False  # a marker has been read after the opener
        self.raw: str | None = None  # the text of a json_block element being read
        self.verbatim = False  # the current call's arguments are a json_block's text, already whole
        if bare:
            self.at, self.started = _At.NAME, True

    def _markers(self) -> tuple[str, ...]:
        s = self.spec
        if self.at is _At.BETWEEN:
            return (s.invoke, *s.wrappers, *s.ends)
        if self.at is _At.BODY:
            return (s.parameter, s.invoke_end, s.invoke, *s.ends, *((s.json_block,) if s.json_block else ()))
        if self.at is _At.VALUE:
            assert self.value is not None
            if self.value.cdata:
                return (END_CDATA,)
            if s.cdata and not self.value.text and not self.value.cdata_done:
                return (CDATA, s.parameter_end, s.parameter, s.invoke_end)
            return (s.parameter_end, s.parameter, s.invoke_end)
        if self.at is _At.JSON:
            return (s.json_block_end, s.invoke_end)
        return (s.head_end,)

    @property
    def _call(self) -> PartialCall:
        return self.calls[-1]

    def _attribute(self, text: str) -> str:
        return text.replace("&quot;", '"').replace("&amp;", "&") if self.spec.attribute_entities else text

    def _open_call(self) -> None:
        head, self.head = self.head.strip(), ""
        self.calls.append(PartialCall(name=self._attribute(head.split('"', 1)[0].strip()), arguments="{"))
        self.count = 0
        self.verbatim = False
        if head.endswith("/"):  # self-closing: no arguments
            self._end_call()
        else:
            self.at = _At.BODY

    def _end_call(self) -> None:
        if self.raw is not None:
            self._end_raw()
        if not self.verbatim:
            self._call.arguments += "}"
        self.at = _At.BETWEEN

    def _end_raw(self) -> None:
        """A json_block's text is the call's arguments, as written (when nothing else was written yet)."""
        assert self.raw is not None
        if self.count == 0 and not self.verbatim:
            self._call.arguments = self.raw
            self.verbatim = True
        self.raw = None

    def _begin_value(self) -> None:
        head, self.head = self.head, ""
        key = self._attribute(head.split('"', 1)[0].strip())
        found = _STRING_FLAG.search(head) if self.spec.string_flag else None
        flag = found.group(1) if found else None
        if self.spec.type_attribute:
            typed = _TYPE.search(head)
            flag = "true" if typed is None or typed.group(1) == "string" else "false"
        name = self._call.name or ""
        kind = declared_type(self.context, name, key)
        if kind is None and self.context.tool(name) is not None:
            kind = "string"  # undeclared keys of a declared tool stay strings
        self._call.arguments += (", " if self.count else "") + json.dumps(key, ensure_ascii=False) + ": "
        self.value = _Value(self._call, kind, flag, self.spec.nulls)
        self.at = _At.VALUE

    def _end_value(self) -> None:
        assert self.value is not None
        self.value.close()
        self.value = None
        self.count += 1
        self.at = _At.BODY

    def _give_back(self) -> str | None:
        """Prose right after the opener, or an invoke name that swallowed markup (a head missing its `">`):
        no call; the text after the last marker read goes back to content and the section ends."""
        if self.at is _At.BETWEEN and not self.started and not_a_start(self.lead + self.buffer, self._markers()):
            return self.lead + self.buffer
        if self.at is _At.NAME and not_a_name((self.head + self._upcoming()).split('"', 1)[0]):
            return self.head + self.buffer
        return None

    def _on(self, marker: str) -> bool:
        """React to a marker; True when the section has ended."""
        s = self.spec
        if self.at is _At.VALUE and self.value is not None and marker in (CDATA, END_CDATA):
            self.value.cdata = marker == CDATA
            self.value.cdata_done = marker == END_CDATA
            return False
        self.started = True
        self.stray += self.gap.end()
        if self.at in (_At.NAME, _At.KEY):
            if self.at is _At.NAME:
                self._open_call()
            else:
                self._begin_value()
            return False
        if self.at is _At.VALUE:
            self._end_value()
            if marker == s.parameter_end:
                return False
        if self.at is _At.JSON:
            self._end_raw()
            self.at = _At.BODY
            if marker == s.json_block_end:
                return False
        if s.json_block and marker == s.json_block:
            self.raw = ""
            self.at = _At.JSON
        elif marker == s.parameter:
            self.at = _At.KEY
        elif marker == s.invoke_end:
            if self.raw is not None:  # a JSON body: the object, without the newline before the end tag
                self.raw = self.raw.rstrip()
            self._end_call()
            return self.bare
        elif marker == s.invoke:
            if self.at is _At.BODY:
                self._end_call()
            self.at = _At.NAME
        elif marker in s.ends:
            if self.at is _At.BODY:
                self._end_call()
            return True
        return False  # a wrapper: skipped

    def _absorb(self, text: str) -> None:
        if self.at in (_At.NAME, _At.KEY):
            self.head += text
        elif self.at is _At.VALUE:
            assert self.value is not None
            if not self.value.cdata_done:  # text between `]]>` and the end tag is no part of the value
                self.value.grow(text)
        elif self.at is _At.JSON or (self.at is _At.BODY and self.raw is not None):
            assert self.raw is not None
            self.raw += text
        elif self.at is _At.BODY and self.spec.json_body and self.count == 0 and (
                self.gap.held + text).lstrip().startswith("{"):
            self.raw, self.gap = (self.gap.held + text).lstrip(), Gap()
        elif self.at is _At.BETWEEN and not self.started:
            self.lead += text
        else:
            self.stray += self.gap.add(text)

    def finish(self) -> None:
        self._absorb(self.buffer)
        self.stray += self.gap.end()
        self.buffer = ""
        if self.at is _At.BETWEEN and not self.started and self.lead.strip():
            self.stray += self.lead
        elif self.at is _At.NAME:
            self.stray += self.spec.invoke + self.head
        elif self.at is _At.VALUE:
            self._end_value()
            self._end_call()
        elif self.at in (_At.BODY, _At.KEY, _At.JSON):
            self._end_call()
