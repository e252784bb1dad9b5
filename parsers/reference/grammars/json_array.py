"""Calls written as JSON objects `{"name": N, "arguments": {...}}` after an opener, usually in one list.

Granite `<|tool_call|>[…]`, Phi-4-mini `functools[…]`, Jamba `<tool_calls>[…]</tool_calls>`, Mistral
pre-v11 `[TOOL_CALLS] […]`, and, unbracketed, Llama 3's `{…}; {…}`. The machine consumes the opener
(a start marker) or hands it over as text (a leading `{`). Key order is free. Each call's arguments
stream as the model writes them (only trailing whitespace waits); a separator, bracket or closing
marker inside a JSON string is text. What does not fit (a list that never starts, an element with
no name) is handed back as content; a list that never starts (prose after the opener) is no call, and
the opener is dropped with it unless it is plain text (`functools`); where the bare `[` is the opener
(xLAM), a list whose first element is no call is text up to that element. Variants: a lone object where
the list belongs (`<|tool_call|>{…}`), arguments written as a JSON string holding the object
(`"arguments": "{…}"`, decoded once the string ends), for Llama 3, bare objects after narration
that end the output (`TrailingCalls`), and, for Apertus, the name as the object's one key
(`{"NAME": {...}}`, `name_as_key`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum

from ..calls import PartialCall


@dataclass(frozen=True)
class JsonArraySpec:
    bracketed: bool = True  # the objects sit in one JSON list `[…]`; else bare objects follow each other
    separator: str = ","  # one character between two objects
    close: str = ""  # a marker after the list (`</tool_calls>`), optional in the text; "" if none
    name_keys: tuple[str, ...] = ("name",)
    argument_keys: tuple[str, ...] = ("arguments", "parameters")
    id_keys: tuple[str, ...] = ()  # keys whose string value is the call's native id (Cohere's `tool_call_id`)
    plain_opener: bool = False  # the opener is ordinary text (`functools`): kept when no list follows
    name_as_key: bool = False  # `{"NAME": {...}}` (Apertus): the first key is the name, its value the arguments
    # the list's own `[` opens the output (xLAM): a list whose first element is no call is text, `[` and all
    plain_bracket: bool = False


class _Expect(Enum):
    """What the top level of an object expects next."""

    KEY = 0
    COLON = 1
    VALUE = 2
    COMMA = 3


def _decoded(literal: str) -> object:
    try:
        return json.loads(literal)
    except ValueError:
        return None


class JsonObject:
    """One `{…}` scanned as it streams: its name, and where its arguments value starts and ends.

    Only the top level is interpreted (keys, colons, commas); nested values are tracked by depth,
    so a name or arguments key inside the arguments is text. A top level that is no JSON object
    (`{1, 2}`) breaks the scan at the offending character.
    """

    def __init__(self, spec: JsonArraySpec) -> None:
        self.spec = spec
        self.text = ""
        self.depth = 0
        self.inside = False  # inside a string literal
        self.escaped = False
        self.string_at = 0
        self.expect = _Expect.KEY
        self.key: object = None
        self.value_at: int | None = None  # where the current top-level value starts
        self.name: str | None = None
        self.id: str | None = None
        self.arguments_at: int | None = None
        self.arguments_end: int | None = None
        self.broken = False

    def feed(self, text: str) -> int | None:
        """Scan more text; once the object closes (or breaks), return how much of `text` it took."""
        start = len(self.text)
        self.text += text
        for i in range(start, len(self.text)):
            if self._step(i, self.text[i]):
                end = i if self.broken else i + 1
                self.text = self.text[:end]
                return end - start
        return None

    def _step(self, i: int, char: str) -> bool:
        """Advance over one character; True when the object ends (closed, or broken before `char`)."""
        if self.inside:
            if self.escaped:
                self.escaped = False
            elif char == "\\":
                self.escaped = True
            elif char == '"':
                self.inside = False
                if self.depth == 1:
                    self._top_string_done(i + 1)
            return False
        if self.depth == 0:  # the opening brace
            self.depth = 1
            return False
        if self.depth > 1:
            if char == '"':
                self.inside, self.string_at = True, i
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                if self.depth == 1:
                    self._value_done(i + 1)
            return False
        return self._top(i, char)

    def _top(self, i: int, char: str) -> bool:
        if char.isspace():
            return False
        if self.expect is _Expect.VALUE and self.value_at is None and char not in ",}":
            self._value_start(i)
        if char == "}":
            if self.expect is _Expect.VALUE and self.value_at is not None:
                self._value_done(i)
            return True
        if self.expect is _Expect.VALUE:
            if char == '"':
                self.inside, self.string_at = True, i
            elif char in "{[":
                self.depth += 1
            elif char == ",":
                if self.value_at is None:
                    return self._break()
                self._value_done(i)
                self.expect = _Expect.KEY
            return False  # other characters belong to a bare value (number, true, false, null)
        if char == '"' and self.expect is _Expect.KEY:
            self.inside, self.string_at = True, i
        elif char == ":" and self.expect is _Expect.COLON:
            self.expect, self.value_at = _Expect.VALUE, None
        elif char == "," and self.expect is _Expect.COMMA:
            self.expect = _Expect.KEY
        else:
            return self._break()
        return False

    def _break(self) -> bool:
        self.broken = True
        return True

    def _top_string_done(self, end: int) -> None:
        if self.expect is _Expect.KEY:
            self.key = _decoded(self.text[self.string_at : end])
            self.expect = _Expect.COLON
        else:
            self._value_done(end)

    def _value_start(self, at: int) -> None:
        self.value_at = at
        if self.spec.name_as_key and self.name is None and isinstance(self.key, str):
            self.name = self.key
            self.arguments_at = at
        elif self.key in self.spec.argument_keys and self.arguments_at is None:
            self.arguments_at = at

    def _value_done(self, end: int) -> None:
        assert self.value_at is not None
        while end > self.value_at and self.text[end - 1].isspace():
            end -= 1
        if self.arguments_at == self.value_at:
            self.arguments_end = end
        if self.key in self.spec.name_keys and self.name is None:
            name = _decoded(self.text[self.value_at : end])
            self.name = name if isinstance(name, str) else None
        if self.key in self.spec.id_keys and self.id is None:
            native = _decoded(self.text[self.value_at : end])
            self.id = native if isinstance(native, str) else None
        self.expect, self.value_at = _Expect.COMMA, None

    def arguments(self, *, final: bool) -> str | None:
        """The arguments text written so far (trailing whitespace held back unless final); None if not begun."""
        if self.arguments_at is None:
            return None
        if self.text.startswith('"', self.arguments_at):  # a JSON string holding the object
            if self.arguments_end is None:
                return self.text[self.arguments_at :].rstrip() if final else None
            literal = self.text[self.arguments_at : self.arguments_end]
            inner = _decoded(literal)
            return inner.strip() if isinstance(inner, str) and isinstance(_decoded(inner), dict) else literal
        if self.arguments_end is not None:
            return self.text[self.arguments_at : self.arguments_end]
        written = self.text[self.arguments_at :]
        return written.rstrip() if final else written


class _At(Enum):
    OPEN = 0  # before `[` (unbracketed: before the first object)
    ITEM = 1  # expecting an object (or `]`)
    OBJECT = 2
    AFTER = 3  # after an object: a separator, `]`, or the end
    CLOSE = 4  # after `]`: the optional closing marker


class JsonArray:
    """Reads one list of calls; `opener` is the marker text the machine consumed ("" for a leading `{`)."""

    def __init__(self, spec: JsonArraySpec, opener: str = "") -> None:
        self.spec = spec
        self.opener = opener
        self.calls: list[PartialCall] = []
        self.stray = ""  # raw text that is no call, shown as content
        self.at = _At.OPEN
        self.held = ""  # whitespace and separators read at the top level, given back if the list ends here
        self.tail = ""  # text after `]` that may begin the closing marker
        self.object: JsonObject | None = None
        self.call = PartialCall()  # the current object's call, listed once its name is known
        self.single = False  # a lone object stood where the list belongs
        self.opening = ""  # plain_bracket: the `[` and whitespace after it, until the first element is a call

    def feed(self, text: str) -> str | None:
        i = 0
        while i < len(text):
            if self.at is _At.OBJECT:
                scanned, plain = self.object, bool(self.opening)
                taken = self._object(text[i:])
                if taken is None:
                    return None
                i += taken
                if scanned is not None and scanned.broken:  # no JSON object after all: the list ends here
                    return text[i:]
                if plain and not self.calls:  # the first element was no call: the list was text
                    return text[i:]
                if self.single:  # the lone object was the whole section
                    if not self.spec.close:
                        return text[i:]
                    self.at = _At.CLOSE
                continue
            if self.at is _At.CLOSE:
                return self._close(text[i:])
            char = text[i]
            if char.isspace():
                self.held += char
            elif char == "{" and (self.at is _At.ITEM or self.at is _At.OPEN):
                self.single = self.at is _At.OPEN and self.spec.bracketed
                self.opening += self.held if self.opening else ""
                self.object, self.call, self.held, self.at = JsonObject(self.spec), PartialCall(), "", _At.OBJECT
                continue
            elif char == "[" and self.at is _At.OPEN and self.spec.bracketed:
                self.held, self.at = "", _At.ITEM
                self.opening = char if self.spec.plain_bracket else ""
            elif char == "]" and self.at in (_At.ITEM, _At.AFTER) and self.spec.bracketed:
                self.held, self.opening = "", ""  # `[]`: an empty list, no call, no text
                if not self.spec.close:
                    return text[i + 1 :]
                self.at = _At.CLOSE
            elif char == self.spec.separator and self.at is _At.AFTER:
                self.held += char
                self.at = _At.ITEM
            else:
                if self.at is _At.OPEN and self.spec.plain_opener:
                    self.stray += self.opener
                self.stray, self.opening = self.stray + self.opening, ""
                leftover, self.held = self.held + text[i:], ""
                return leftover
            i += 1
        return None

    def _object(self, text: str) -> int | None:
        """Feed the open object; once it ends, settle its call and return how much text it took."""
        assert self.object is not None
        taken = self.object.feed(text)
        self._show()
        if taken is not None:
            self._settle(final=True)
            self.at, self.object = _At.AFTER, None
        return taken

    def _show(self) -> None:
        """List the call once its name is known; extend its arguments with what was written since."""
        assert self.object is not None
        if self.call.name is None and self.object.name is not None:
            self.call.name, self.call.id = self.object.name, self.object.id
            self.calls.append(self.call)
            self.opening = ""  # the list holds calls: its `[` was markup
        written = self.object.arguments(final=False)
        if written is not None and len(written) > len(self.call.arguments):
            self.call.arguments += written[len(self.call.arguments) :].rstrip()

    def _settle(self, *, final: bool) -> None:
        """The object ended (or the stream did): complete its call, or hand its text back as content."""
        assert self.object is not None
        if self.call.name is None:
            self.stray += self.opening + self.object.text
            self.opening = ""
            return
        written = self.object.arguments(final=final)
        self.call.arguments = "{}" if written is None else written

    def _close(self, text: str) -> str | None:
        self.tail += text
        head = self.tail.lstrip()
        if head.startswith(self.spec.close):
            self.tail = ""
            return head[len(self.spec.close) :]
        if self.spec.close.startswith(head):
            return None
        leftover, self.tail = self.tail, ""
        return leftover

    def finish(self) -> None:
        if self.at is _At.OBJECT and self.object is not None:
            self._settle(final=True)
        elif self.at is _At.OPEN and self.spec.plain_opener:
            self.stray += self.opener
        elif self.at is _At.ITEM and self.opening:
            self.stray += self.opening + self.held



class TrailingCalls:
    """Bare call objects after narration (Llama 3's `…\n{"name": …}`): calls only if they end the output.

    The machine consumed OPEN (a newline and `{`). Everything waits until the end of the stream:
    objects with names followed by nothing but whitespace are calls (the newline was markup); any
    other text after them, or an object that is no call, gives the whole text back as content.
    """

    def __init__(self, spec: JsonArraySpec, opener: str) -> None:
        self.opener = opener
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.inner = JsonArray(spec)
        self.raw = ""  # the text read so far, OPEN included
        self.done = False
        self.feed(opener.lstrip())
        self.raw = opener

    def feed(self, text: str) -> str | None:
        if self.done:
            return text
        self.raw += text
        leftover = self.inner.feed(text)
        if leftover is None:
            return None
        self.done = True
        self.stray = self.raw[: len(self.raw) - len(leftover)]
        return leftover

    def finish(self) -> None:
        if self.done:
            return
        self.inner.finish()
        if self.inner.calls and not self.inner.stray and all(c.name for c in self.inner.calls):
            self.calls = self.inner.calls
        else:
            self.stray = self.raw
