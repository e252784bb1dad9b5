"""Calls in Gemma's own object syntax: OPEN call:NAME{key:value,...} CLOSE, one per block, or several
`call:` bodies back to back in one block.

Gemma 4 (`<|tool_call>` … `<tool_call|>`, strings between `<|"|>` delimiters) and FunctionGemma
(`<start_function_call>` … `<end_function_call>`, strings between `<escape>`). Keys are bare or
delimited; a string is raw text up to the next delimiter (no escapes, so markers inside a string are
text); bare values are numbers, true, false and null; objects and arrays nest. Arguments stream as
a growing JSON object: a top-level string as it is written, other values once complete. Anything
else (JSON-style quotes, bare words) makes the call keep its raw argument text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..calls import PartialCall
from ..scan import partial_tail
from .object_writer import ObjectWriter

_KEY = re.compile(r"[^\s:,{}\[\]<>\"']+")  # a bare key: anything up to its ':' but structure and quotes
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


@dataclass(frozen=True)
class GemmaCallSpec:
    close: str  # the block's end marker
    quote: str  # the string delimiter
    prefix: str = "call:"


class _At(Enum):
    PREFIX = 0  # before `call:`
    NAME = 1  # the name, up to `{`
    MEMBER = 2  # a key, or `}`
    KEY = 3  # a bare key
    QUOTED_KEY = 4
    COLON = 5
    VALUE = 6  # the first characters of a value
    STRING = 7  # a top-level string, streamed
    NESTED = 8  # an object or array, until balanced
    BARE = 9  # a number or word
    AFTER_VALUE = 10  # `,` or `}`
    RAW = 11  # unconvertible arguments, until CLOSE
    AFTER = 12  # after the object: CLOSE
    SKIP = 13  # a block that is no call, until CLOSE


def bare_value(text: str) -> Any:
    """A bare token as a JSON value; ValueError for anything but a number or true/false/null."""
    text = text.strip()
    if text in _WORDS:
        return _WORDS[text]
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"not a bare value: {text[:40]!r}")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {text!r}")
    return number


def parse_value(text: str, quote: str) -> Any:
    """A complete value (string, object, array or bare token) as a JSON value; ValueError if malformed."""
    value, end = _value(text, _space(text, 0), quote)
    if text[end:].strip():
        raise ValueError(f"text after the value: {text[end:][:40]!r}")
    return value


def _space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _string(text: str, at: int, quote: str) -> tuple[str, int]:
    end = text.find(quote, at + len(quote))
    if end == -1:
        raise ValueError("unterminated string")
    return text[at + len(quote) : end], end + len(quote)


def _value(text: str, at: int, quote: str) -> tuple[Any, int]:
    if text.startswith(quote, at):
        return _string(text, at, quote)
    if text[at : at + 1] in ("{", "["):
        return _container(text, at, quote)
    end = at
    while end < len(text) and text[end] not in ",}]" and not text.startswith(quote, end):
        end += 1
    return bare_value(text[at:end]), end


def _container(text: str, at: int, quote: str) -> tuple[Any, int]:
    closing = "}" if text[at] == "{" else "]"
    items: list[Any] = []
    members: dict[str, Any] = {}
    at = _space(text, at + 1)
    while True:
        if text[at : at + 1] == closing:
            return (members if closing == "}" else items), at + 1
        if at >= len(text):
            raise ValueError("unterminated object or array")
        if closing == "}":
            if text.startswith(quote, at):
                key, at = _string(text, at, quote)
            else:
                match = _KEY.match(text, at)
                if not match:
                    raise ValueError(f"bad key at {text[at:][:20]!r}")
                key, at = match.group(), match.end()
            at = _space(text, at)
            if text[at : at + 1] != ":":
                raise ValueError("missing ':'")
            members[key], at = _value(text, _space(text, at + 1), quote)
        else:
            value, at = _value(text, at, quote)
            items.append(value)
        at = _space(text, at)
        if text[at : at + 1] == ",":
            at = _space(text, at + 1)


class GemmaCall:
    def __init__(self, spec: GemmaCallSpec) -> None:
        self.spec = spec
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.buffer = ""
        self.at = _At.PREFIX
        self.leftover: str | None = None  # set when the block has ended
        self.token = ""  # the name, key or value text being read
        self.source = ""  # source of the current member since the last one written (raw fallback)
        self.writer: ObjectWriter | None = None
        self.depth = 0  # NESTED: open brackets
        self.quoted = False  # NESTED / RAW: inside a string

    # -- helpers ------------------------------------------------------------------------------

    def _take(self, size: int) -> str:
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        self.source += taken
        return taken

    def _skip_space(self) -> bool:
        stripped = self.buffer.lstrip()
        self._take(len(self.buffer) - len(stripped))
        return bool(self.buffer)

    def _partial(self, *markers: str) -> bool:
        """The buffer is a proper prefix of a marker: wait for more text."""
        return any(m.startswith(self.buffer) and m != self.buffer for m in markers)

    @property
    def _writer(self) -> ObjectWriter:
        assert self.writer is not None
        return self.writer

    def _end_block(self) -> None:
        self.buffer = self.buffer[len(self.spec.close) :]
        self.leftover, self.buffer = self.buffer, ""

    def _to_raw(self) -> None:
        self._writer.raw_text(self.source)
        self.source, self.quoted, self.at = "", False, _At.RAW

    def _written(self) -> None:
        """A member has been written: the raw fallback starts afresh."""
        self.source, self.at = "", _At.AFTER_VALUE

    # -- states -------------------------------------------------------------------------------

    def _prefix(self, final: bool) -> bool:
        spec = self.spec
        if not self._skip_space():
            return False
        if self.buffer.startswith(spec.prefix):
            self._take(len(spec.prefix))
            self.token, self.at = "", _At.NAME
        elif self.buffer.startswith(spec.close):
            self._end_block()
        elif not final and self._partial(spec.prefix, spec.close):
            return False
        else:  # not a call (tool.false_start): the block ends at once, its text is read on as content
            self.leftover, self.buffer = self.buffer, ""
            return False
        return True

    def _skip(self, final: bool) -> bool:
        at = self.buffer.find(self.spec.close)
        if at == -1:
            keep = 0 if final else partial_tail(self.buffer, (self.spec.close,))
            self.stray += self.buffer[: len(self.buffer) - keep]
            self.buffer = self.buffer[len(self.buffer) - keep :]
            return False
        self.stray += self.buffer[:at]
        self.buffer = self.buffer[at:]
        self._end_block()
        return False

    def _name(self, final: bool) -> bool:
        close = self.spec.close
        at = next((i for i, c in enumerate(self.buffer) if c == "{" or self.buffer.startswith(close, i)), -1)
        if at == -1:
            keep = 0 if final else partial_tail(self.buffer, (close,))
            self.token += self.buffer[: len(self.buffer) - keep]
            self.buffer = self.buffer[len(self.buffer) - keep :]
            return False
        self.token += self.buffer[:at]
        self.buffer = self.buffer[at:]
        name = self.token.strip()
        if not name or any(c.isspace() for c in name):
            self.stray += self.spec.prefix + self.token
            self.at = _At.SKIP
            return True
        call = PartialCall(name=name)
        self.calls.append(call)
        self.writer = ObjectWriter(call)
        if self.buffer.startswith(close):  # call:NAME<close>: no arguments at all
            self.writer.close()
            self._end_block()
            return False
        self.source = ""
        self._take(1)
        self.at = _At.MEMBER
        return True

    def _member(self, final: bool) -> bool:
        spec = self.spec
        if not self._skip_space():
            return False
        char = self.buffer[0]
        if char == "}":
            self._take(1)
            self._writer.close()
            self.at = _At.AFTER
        elif char == ",":
            self._take(1)
        elif self.buffer.startswith(spec.quote):
            self._take(len(spec.quote))
            self.token, self.at = "", _At.QUOTED_KEY
        elif self.buffer.startswith(spec.close):
            self._writer.close()
            self._end_block()
            return False
        elif not final and self._partial(spec.quote, spec.close):
            return False
        elif _KEY.match(char):
            self.token, self.at = "", _At.KEY
        else:
            self._to_raw()
        return True

    def _key(self) -> bool:
        match = _KEY.match(self.buffer)
        size = match.end() if match else 0
        self.token += self._take(size)
        if not self.buffer:
            return size > 0
        self.at = _At.COLON
        return True

    def _quoted_key(self, final: bool) -> bool:
        at = self.buffer.find(self.spec.quote)
        if at == -1:
            keep = 0 if final else partial_tail(self.buffer, (self.spec.quote,))
            self.token += self._take(len(self.buffer) - keep)
            return False
        self.token += self._take(at)
        self._take(len(self.spec.quote))
        self.at = _At.COLON
        return True

    def _colon(self) -> bool:
        if not self._skip_space():
            return False
        if self.buffer[0] == ":":
            self._take(1)
            self.at = _At.VALUE
        else:
            self._to_raw()
        return True

    def _value_start(self, final: bool) -> bool:
        spec = self.spec
        if not self._skip_space():
            return False
        if self.buffer.startswith(spec.quote):
            self._take(len(spec.quote))
            self._writer.begin_string(self.token)
            self.at = _At.STRING
        elif self.buffer[0] in "{[":
            self.value, self.depth, self.quoted, self.at = "", 0, False, _At.NESTED
        elif not final and self._partial(spec.quote, spec.close):
            return False
        elif self.buffer.startswith(spec.close):
            self._to_raw()
        else:
            self.value, self.at = "", _At.BARE
        return True

    def _string(self, final: bool) -> bool:
        quote = self.spec.quote
        at = self.buffer.find(quote)
        end = at if at != -1 else len(self.buffer) - (0 if final else partial_tail(self.buffer, (quote,)))
        text = self._take(end)
        if text:
            self._writer.string_text(text)
        if at == -1:
            return bool(text)
        self._take(len(quote))
        self._writer.end_string()
        self._written()
        return True

    def _nested(self, final: bool) -> bool:
        quote, close = self.spec.quote, self.spec.close
        i = 0
        while i < len(self.buffer):
            if self.buffer.startswith(quote, i):
                self.quoted = not self.quoted
                i += len(quote)
                continue
            if not final and quote.startswith(self.buffer[i:]) and self.buffer[i] == quote[0]:
                break  # a delimiter may be arriving
            if not self.quoted:
                if self.buffer.startswith(close, i) or (not final and close.startswith(self.buffer[i:])):
                    break
                char = self.buffer[i]
                self.depth += 1 if char in "{[" else -1 if char in "}]" else 0
                if self.depth == 0:
                    self.value += self._take(i + 1)
                    try:
                        self._writer.value(self.token, parse_value(self.value, quote))
                    except ValueError:
                        self._to_raw()
                        return True
                    self._written()
                    return True
            i += 1
        self.value += self._take(i)
        if self.buffer.startswith(close):
            self._to_raw()
            return True
        return i > 0

    def _bare(self, final: bool) -> bool:
        spec = self.spec
        stops = ",}]" + spec.quote[0] + spec.close[0]
        at = next((i for i, c in enumerate(self.buffer) if c in stops), len(self.buffer))
        self.value += self._take(at)
        if not self.buffer:
            return at > 0
        try:
            self._writer.value(self.token, bare_value(self.value))
        except ValueError:
            self._to_raw()
            return True
        self._written()
        return True

    def _after_value(self, final: bool) -> bool:
        spec = self.spec
        if not self._skip_space():
            return False
        char = self.buffer[0]
        if char == ",":
            self._take(1)
            self.at = _At.MEMBER
        elif char == "}":
            self._take(1)
            self._writer.close()
            self.at = _At.AFTER
        elif self.buffer.startswith(spec.close):  # the object's `}` is missing
            self._writer.close()
            self._end_block()
            return False
        elif not final and self._partial(spec.close):
            return False
        else:
            self._to_raw()
        return True

    def _raw(self, final: bool) -> bool:
        quote, close = self.spec.quote, self.spec.close
        i = 0
        while i < len(self.buffer):
            if self.buffer.startswith(quote, i):
                self.quoted = not self.quoted
                i += len(quote)
                continue
            if not self.quoted and self.buffer.startswith(close, i):
                self._writer.raw_text(self.buffer[:i])
                self.buffer = self.buffer[i:]
                self._end_block()
                return False
            i += 1
        keep = 0 if final else partial_tail(self.buffer, (quote, close))
        self._writer.raw_text(self.buffer[: len(self.buffer) - keep])
        self.buffer = self.buffer[len(self.buffer) - keep :]
        return False

    def _after(self, final: bool) -> bool:
        close, prefix = self.spec.close, self.spec.prefix
        ahead = self.buffer.lstrip()
        if ahead.startswith(prefix):  # another call in the same block, as Gemma 4 writes parallel calls at times
            self._take(len(self.buffer) - len(ahead))
            self.at = _At.PREFIX
            return True
        if not final and ahead and prefix.startswith(ahead):  # maybe the next call: wait for more text
            return False
        at = self.buffer.find(close)
        if at == -1:
            keep = 0 if final else partial_tail(self.buffer, (close,))
            junk = self.buffer[: len(self.buffer) - keep]
            self.stray += junk if junk.strip() else ""
            self.buffer = self.buffer[len(self.buffer) - keep :]
            return False
        junk = self.buffer[:at]
        self.stray += junk if junk.strip() else ""
        self.buffer = self.buffer[at:]
        self._end_block()
        return False

    def _step(self, final: bool) -> bool:
        handlers = {
            _At.PREFIX: lambda: self._prefix(final),
            _At.SKIP: lambda: self._skip(final),
            _At.NAME: lambda: self._name(final),
            _At.MEMBER: lambda: self._member(final),
            _At.KEY: self._key,
            _At.QUOTED_KEY: lambda: self._quoted_key(final),
            _At.COLON: self._colon,
            _At.VALUE: lambda: self._value_start(final),
            _At.STRING: lambda: self._string(final),
            _At.NESTED: lambda: self._nested(final),
            _At.BARE: lambda: self._bare(final),
            _At.AFTER_VALUE: lambda: self._after_value(final),
            _At.RAW: lambda: self._raw(final),
            _At.AFTER: lambda: self._after(final),
        }
        return handlers[self.at]()

    def _run(self, final: bool) -> None:
        while self.leftover is None and self._step(final):
            pass

    # -- the codec protocol -------------------------------------------------------------------

    def feed(self, text: str) -> str | None:
        self.buffer += text
        self._run(final=False)
        return self.leftover

    def finish(self) -> None:
        """End of output inside the block (its CLOSE never came): complete what is complete."""
        self._run(final=True)
        if self.leftover is not None:
            self.stray += self.leftover if self.leftover.strip() else ""
            return
        rest, self.buffer = self.buffer, ""
        if self.at in (_At.PREFIX, _At.SKIP, _At.AFTER):
            self.stray += rest if rest.strip() else ""
        elif self.at is _At.NAME:
            self.stray += self.spec.prefix + self.token + rest
        elif self.at in (_At.MEMBER, _At.AFTER_VALUE):
            self._writer.close()
        elif self.at in (_At.BARE, _At.NESTED):
            convert = bare_value if self.at is _At.BARE else (lambda t: parse_value(t, self.spec.quote))
            try:
                self._writer.value(self.token, convert(self.value + rest))
                self._writer.close()
            except ValueError:
                self._writer.raw_text(self.source + rest)
        elif self.at in (_At.KEY, _At.QUOTED_KEY, _At.COLON, _At.VALUE, _At.RAW):
            self._writer.raw_text(self.source + rest)
