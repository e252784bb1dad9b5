"""A section of invokes whose arguments are elements named after their keys (MiniMax-M3).

    ( INVOKE NAME"> ( NS<key> VALUE NS</key> )* INVOKE_END )+ END

where VALUE is raw text or nested elements: an object's members by name, an array's items as `NS<item>` elements.
The declared schema types each leaf and says whether an element holding elements is an object or an array; an
element without a schema holding only `item` elements is an array. Whitespace between elements is framing.
Arguments stream as a growing JSON object: a top-level string value character by character, any other value once
its element is complete (a nested value is not known to be an object or an array before it ends); a section cut
off inside an invoke keeps the elements complete so far and the string streamed so far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from parsers import RequestContext

from ..calls import PartialCall
from ..scan import partial_tail
from ..values import _TYPES, _members, convert
from .gap import Gap
from .stepper import MarkerStepper, not_a_name, not_a_start


@dataclass(frozen=True)
class XmlElementSpec:
    ends: tuple[str, ...]  # markers that close the section
    invoke: str  # up to the name's opening quote: `NS<invoke name="`
    invoke_end: str
    namespace: str  # the token before every tag
    item: str = "item"  # the element name of array items


class _At(Enum):
    BETWEEN = 0
    NAME = 1
    BODY = 2


# an element: its name and its text, or its child elements in order
_Element = tuple[str, "str | list[_Element]"]


def _elements(text: str, ns: str) -> tuple[list[_Element], int]:
    """The complete elements of an invoke body, in order, and where the first incomplete one starts."""
    out: list[_Element] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        found = _element(text, pos, ns, 0)
        if found is None:
            return out, pos
        element, pos = found
        out.append(element)


def _element(text: str, pos: int, ns: str, depth: int) -> tuple[_Element, int] | None:
    if depth > 64 or not text.startswith(ns + "<", pos) or text.startswith(ns + "</", pos):
        return None
    start = pos + len(ns) + 1
    end = text.find(">", start)
    if end <= start:
        return None
    name = text[start:end]
    close = f"{ns}</{name}>"
    pos = end + 1
    parts: list[str] = []
    children: list[_Element] = []
    while True:
        at = text.find(ns, pos)
        if at < 0:
            return None
        parts.append(text[pos:at])
        if text.startswith(close, at):
            pos = at + len(close)
            break
        child = _element(text, at, ns, depth + 1)
        if child is None:
            return None
        children.append(child[0])
        pos = child[1]
    return (name, children if children else "".join(parts)), pos


def _kind(schema: Any) -> str | None:
    return "|".join(dict.fromkeys(k for k in _members(schema) if k in _TYPES)) or None


def _option(schema: Any, kind: str) -> dict[str, Any]:
    """The member of a (union) schema that is of `kind`."""
    if not isinstance(schema, dict):
        return {}
    if kind in _members({"type": schema.get("type")}):  # its own type (aliases read as JSON types)
        return schema
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            if isinstance(option, dict) and kind in _members(option):
                return option
    return {}


def _typed(value: str | list[_Element], schema: Any, item: str) -> Any:
    kinds = (_kind(schema) or "").split("|")
    if isinstance(value, str):
        if not value.strip() and ("object" in kinds or "array" in kinds) and "string" not in kinds:
            return [] if "array" in kinds and "object" not in kinds else {}
        return convert(value, _kind(schema) if schema is not None else "string")
    if "array" in kinds or ("object" not in kinds and all(name == item for name, _ in value)):
        items = _option(schema, "array").get("items")
        return [_typed(child, items, item) for _, child in value]
    return _object(value, _option(schema, "object") if schema is not None else None, item)


def _child(schema: dict[str, Any] | None, name: str) -> Any:
    """The schema of a member, None where the object declares none (its value stays text)."""
    properties = (schema or {}).get("properties") or {}
    extra = (schema or {}).get("additionalProperties")
    return properties.get(name, extra if isinstance(extra, dict) else None)


def _object(elements: list[_Element], schema: dict[str, Any] | None, item: str) -> dict[str, Any]:
    return {name: _typed(value, _child(schema, name), item) for name, value in elements}


def _streams(schema: Any) -> bool:
    """Whether a member's value is a plain string: declared `string`, or undeclared."""
    return schema is None or _kind(schema) == "string"


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class XmlElement(MarkerStepper):
    def __init__(self, spec: XmlElementSpec, context: RequestContext) -> None:
        self.spec = spec
        self.context = context
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.gap = Gap()
        self.at = _At.BETWEEN
        self.buffer = ""
        self.head = ""
        self.body = ""
        self.lead = ""
        self.started = False
        self.done = 0  # complete elements of the current invoke written into its arguments
        self.streamed = -1  # characters of the open string value written, -1 while no string is open

    def _markers(self) -> tuple[str, ...]:
        s = self.spec
        if self.at is _At.BETWEEN:
            return (s.invoke, *s.ends)
        if self.at is _At.BODY:
            return (s.invoke_end,)
        return ('">',)

    def _schema(self) -> dict[str, Any] | None:
        tool = self.context.tool(self.calls[-1].name or "")
        return tool.parameters if tool is not None else None  # an undeclared tool: every leaf stays text

    def _key(self, name: str) -> str:
        return (", " if self.done else "") + json.dumps(name, ensure_ascii=False) + ": "

    def _progress(self) -> None:
        """Write the elements completed since the last call, and the open string value so far."""
        call, ns = self.calls[-1], self.spec.namespace
        elements, rest = _elements(self.body, ns)
        schema = self._schema()
        for name, value in elements[self.done :]:
            if self.streamed >= 0 and isinstance(value, str):
                call.arguments += _escaped(value[self.streamed :]) + '"'
            else:
                call.arguments += ("" if self.streamed >= 0 else self._key(name)) + json.dumps(
                    _typed(value, _child(schema, name), self.spec.item), ensure_ascii=False)
            self.streamed = -1
            self.done += 1
        head = self.body[rest:]
        if not head.startswith(ns + "<") or head.startswith(ns + "</") or ">" not in head:
            return
        name, _, text = head[len(ns) + 1 :].partition(">")
        if not _streams(_child(schema, name)) or ns in text:
            return
        text = text[: len(text) - partial_tail(text, (ns,))]
        if self.streamed < 0:
            if not text:
                return
            call.arguments += self._key(name) + '"'
            self.streamed = 0
        call.arguments += _escaped(text[self.streamed :])
        self.streamed = len(text)

    def _waiting(self) -> None:
        if self.at is _At.BODY:
            self._progress()

    def _end_call(self) -> None:
        self._progress()
        if self.streamed >= 0:  # cut off inside a string value
            self.calls[-1].arguments += '"'
        self.calls[-1].arguments += "}"
        self.body = ""
        self.done = 0
        self.streamed = -1
        self.at = _At.BETWEEN

    def _give_back(self) -> str | None:
        if self.at is _At.BETWEEN and not self.started and not_a_start(self.lead + self.buffer, self._markers()):
            return self.lead + self.buffer
        if self.at is _At.NAME and not_a_name(self.head + self._upcoming()):
            return self.head + self.buffer
        return None

    def _on(self, marker: str) -> bool:
        s = self.spec
        self.started = True
        self.stray += self.gap.end()
        if self.at is _At.NAME:
            self.calls.append(PartialCall(name=self.head.strip(), arguments="{"))
            self.head = ""
            self.at = _At.BODY
            return False
        if self.at is _At.BODY:
            self._end_call()
            return False
        if marker == s.invoke:
            self.at = _At.NAME
            return False
        return True  # a section end

    def _absorb(self, text: str) -> None:
        if self.at is _At.NAME:
            self.head += text
        elif self.at is _At.BODY:
            self.body += text
        elif not self.started:
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
        elif self.at is _At.BODY:
            self._end_call()
