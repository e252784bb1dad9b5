"""Pythonic call lists: `[name(key=literal, ...), ...]`, Llama 3.2 / Llama 4 style.

The list opens a section at the very start of the output (its `[` arrives as text, see
`Grammar.leading`) or after a wrapper marker such as Llama 4's `<|python_start|>`; an optional end
marker may follow the `]`. With `PythonicSpec.close` set, the section is no list: calls follow the
opening marker one per line (Olmo 3's `<function_calls>`), and the close marker ends it. Keyword arguments are Python literals converted to JSON (True/False/
None, tuples and sets as lists); nothing is executed. A string value streams as it is written,
any other value once it is complete. A call whose arguments are not keyword literals keeps its raw
argument text. Text that opened a section but is no call list goes back to the content.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..calls import PartialCall
from .object_writer import ObjectWriter
from .python_literals import Skimmer, decode, python_value, scan_string, string_opening


@dataclass(frozen=True)
class PythonicSpec:
    end: str = ""  # a marker that may follow the closing `]` (Llama 4 `<|python_end|>`)
    close: str = ""  # set: no brackets, calls separated by whitespace until this marker (Olmo 3)


class _At(Enum):
    OPEN = 0  # before `[`
    HEAD = 1  # after `[` or `,`: a call name, or `]`
    NAME = 2  # a (dotted) call name, then `(`
    PAREN = 3  # inside the call: a keyword, `)`, or anything else (raw)
    KEY = 4
    EQUALS = 5
    VALUE = 6  # the first characters of a value
    LITERAL = 7  # a non-string value, until a top-level `,` or `)`
    STRING = 8  # a string literal, streamed
    AFTER_STRING = 9  # `,`, `)`, or another literal (implicit concatenation)
    RAW = 10  # unconvertible arguments, until the call's `)`
    NEXT = 11  # after a call: `,` or `]`
    END = 12  # after `]`: an optional end marker


def _name_char(char: str) -> bool:
    return char.isalnum() or char in "_."


def _key_char(char: str) -> bool:
    return char.isalnum() or char == "_"


class PythonicList:
    def __init__(self, spec: PythonicSpec) -> None:
        self.spec = spec
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.buffer = ""
        self.at = _At.HEAD if spec.close else _At.OPEN
        self.leftover: str | None = None  # set when the section has ended
        self.pending = ""  # consumed outside calls since the last call: handed back if no call follows
        self.token = ""  # the name or keyword being read
        self.source = ""  # source text of the current argument, for the raw fallback
        self.writer: ObjectWriter | None = None
        self.skimmer = Skimmer()
        self.literal = ""  # a non-string value being read
        self.quote = ""
        self.raw_string = False

    # -- consuming text ---------------------------------------------------------------------

    def _take(self, size: int) -> str:
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        if self.writer is None:
            self.pending += taken
        else:
            self.source += taken
        return taken

    def _skip_space(self) -> bool:
        """Consume leading whitespace; True when a non-space character is available."""
        stripped = self.buffer.lstrip()
        self._take(len(self.buffer) - len(stripped))
        return bool(self.buffer)

    def _give_up(self) -> None:
        """No (further) call list here: what was read goes back to the content."""
        if self.calls:
            self.leftover = self.pending + self.buffer
        else:
            self.stray += self.pending
            self.leftover = self.buffer
        self.buffer = self.pending = ""

    @property
    def _writer(self) -> ObjectWriter:
        assert self.writer is not None
        return self.writer

    def _to_raw(self, keep_source: bool = True) -> None:
        if keep_source:
            self._writer.raw_text(self.source)
        else:
            self._writer.raw = True
        self.source, self.skimmer, self.at = "", Skimmer(), _At.RAW

    def _close_call(self) -> None:
        self._writer.close()
        self.writer, self.pending, self.at = None, "", _At.NEXT

    # -- states -----------------------------------------------------------------------------

    def _outside(self, final: bool) -> bool:
        if not self._skip_space():
            if final:
                self._give_up()
            return False
        char = self.buffer[0]
        if self.spec.close:
            return self._unbracketed(char, final)
        if self.at is _At.OPEN:
            if char != "[":
                self._give_up()
                return False
            self._take(1)
            self.at = _At.HEAD
        elif self.at is _At.HEAD:
            if char == "]" and self.calls:
                self._take(1)
                self.at = _At.END
            elif char.isalpha() or char == "_":
                self.token, self.at = "", _At.NAME
            else:
                self._give_up()
        else:  # NEXT
            if char not in ",]":
                self._give_up()
                return False
            self._take(1)
            self.at = _At.HEAD if char == "," else _At.END
        return True

    def _unbracketed(self, char: str, final: bool) -> bool:
        """Between calls of a section with no list: the close marker, or the next call's name."""
        close = self.spec.close
        if self.buffer.startswith(close):
            self._take(len(close))
            self.leftover, self.buffer = self.buffer, ""
            return False
        if not final and close.startswith(self.buffer):
            return False
        if char.isalpha() or char == "_":
            self.token, self.at = "", _At.NAME
            return True
        self._give_up()
        return False

    def _name(self, final: bool) -> bool:
        size = 0
        while size < len(self.buffer) and _name_char(self.buffer[size]):
            size += 1
        self.token += self._take(size)
        rest = self.buffer.lstrip()
        if not rest:
            if final:
                self._give_up()
            return size > 0
        if rest[0] != "(" or not all(part.isidentifier() for part in self.token.split(".")):
            self._give_up()
            return False
        self._take(len(self.buffer) - len(rest) + 1)
        call = PartialCall(name=self.token)
        self.calls.append(call)
        self.writer, self.source, self.at = ObjectWriter(call), "", _At.PAREN
        return True

    def _argument_start(self) -> bool:
        if not self._skip_space():
            return False
        char = self.buffer[0]
        if char == ")":
            self._take(1)
            self._close_call()
        elif char.isalpha() or char == "_":
            self.token, self.at = "", _At.KEY
        else:
            self._to_raw()
        return True

    def _key(self) -> bool:
        size = 0
        while size < len(self.buffer) and _key_char(self.buffer[size]):
            size += 1
        self.token += self._take(size)
        if not self.buffer:
            return size > 0
        self.at = _At.EQUALS
        return True

    def _equals(self, final: bool) -> bool:
        if not self._skip_space():
            return False
        if self.buffer[0] != "=":
            self._to_raw()
            return True
        if len(self.buffer) < 2 and not final:
            return False
        if self.buffer[1:2] == "=":
            self._to_raw()
            return True
        self._take(1)
        self.at = _At.VALUE
        return True

    def _value(self, final: bool) -> bool:
        if not self._skip_space():
            return False
        try:
            opening = string_opening(self.buffer, final)
        except ValueError:
            return False
        if opening is None:
            self.skimmer, self.literal, self.at = Skimmer(), "", _At.LITERAL
            return True
        size, self.quote, self.raw_string = opening
        self._take(size)
        self._writer.begin_string(self.token)
        self.at = _At.STRING
        return True

    def _literal(self, final: bool) -> bool:
        at, stop = self.skimmer.run(self.buffer, final)
        self.literal += self._take(at)
        if stop is None:
            return at > 0
        if stop in "]}":
            self._to_raw()
            return True
        try:
            self._writer.value(self.token, python_value(self.literal))
        except ValueError:
            self._to_raw()
            return True
        self._after_argument(stop)
        return True

    def _after_argument(self, stop: str) -> None:
        self._take(1)
        if stop == ")":
            self._close_call()
        else:
            self.source, self.at = stop, _At.PAREN  # a raw fallback keeps the separator

    def _string(self, final: bool) -> bool:
        safe, closed = scan_string(self.buffer, self.quote, self.raw_string, final)
        segment = self._take(safe)
        if segment:
            self._writer.string_text(decode(segment, self.raw_string))
        if closed:
            self._take(len(self.quote))
            self.at = _At.AFTER_STRING
        return bool(segment) or closed

    def _after_string(self, final: bool) -> bool:
        if not self._skip_space():
            return False
        char = self.buffer[0]
        if char in ",)":
            self._writer.end_string()
            self._after_argument(char)
            return True
        try:
            opening = string_opening(self.buffer, final)
        except ValueError:
            return False
        if opening is None:
            self._to_raw(keep_source=False)  # the string so far is already written
            return True
        size, self.quote, self.raw_string = opening  # "a" "b": implicit concatenation
        self._take(size)
        self.at = _At.STRING
        return True

    def _raw(self, final: bool) -> bool:
        progress = False
        while self.buffer:
            at, stop = self.skimmer.run(self.buffer, final)
            upto = at + 1 if stop is not None and stop != ")" else at
            self._writer.raw_text(self.buffer[:upto])
            self.buffer = self.buffer[upto:]
            progress = progress or upto > 0
            if stop == ")":
                self.buffer = self.buffer[1:]
                self._close_call()
                return True
            if stop is None:
                break
        return progress

    def _end(self, final: bool) -> bool:
        end = self.spec.end
        rest = self.buffer.lstrip()
        if end and rest.startswith(end):
            self.leftover = rest[len(end) :]
        elif end and not final and end.startswith(rest):
            return False
        else:
            self.leftover = self.buffer
        self.buffer = ""
        return False

    def _step(self, final: bool) -> bool:
        at = self.at
        if at in (_At.OPEN, _At.HEAD, _At.NEXT):
            return self._outside(final)
        handlers = {
            _At.NAME: lambda: self._name(final),
            _At.PAREN: self._argument_start,
            _At.KEY: self._key,
            _At.EQUALS: lambda: self._equals(final),
            _At.VALUE: lambda: self._value(final),
            _At.LITERAL: lambda: self._literal(final),
            _At.STRING: lambda: self._string(final),
            _At.AFTER_STRING: lambda: self._after_string(final),
            _At.RAW: lambda: self._raw(final),
            _At.END: lambda: self._end(final),
        }
        return handlers[at]()

    def _run(self, final: bool) -> None:
        while self.leftover is None and self._step(final):
            pass

    # -- the codec protocol -----------------------------------------------------------------

    def feed(self, text: str) -> str | None:
        self.buffer += text
        self._run(final=False)
        return self.leftover

    def finish(self) -> None:
        """End of output inside the list: complete what is complete, keep every character."""
        self._run(final=True)
        if self.leftover is not None:
            self.stray += self.leftover if self.leftover.strip() else ""
            return
        if self.writer is None:
            rest = self.pending + self.buffer
            self.stray += rest if rest.strip() else ""
            return
        if self.at in (_At.PAREN, _At.AFTER_STRING):
            if self.at is _At.AFTER_STRING:
                self.writer.end_string()
            self.writer.close()
        elif self.at is _At.LITERAL:
            try:
                self.writer.value(self.token, python_value(self.literal + self.buffer))
                self.writer.close()
            except ValueError:
                self.writer.raw_text(self.source + self.buffer)
        elif self.at in (_At.KEY, _At.EQUALS, _At.VALUE):
            self.writer.raw_text(self.source + self.buffer)
        elif self.at is _At.RAW:
            self.writer.raw_text(self.buffer)
        self.buffer = ""
