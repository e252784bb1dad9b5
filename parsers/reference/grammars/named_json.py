"""One call per start marker and no end marker: NAME SEP JSON, the call ending where its JSON closes.

Mistral v11+ (`[TOOL_CALLS]NAME[ARGS]{…}`; parallel calls repeat `[TOOL_CALLS]`). The name runs up to
SEP; the arguments stream as written (only trailing whitespace waits) and end with the bracket
that closes their value, outside string literals; whatever follows goes back to the machine. A `{`
right after the name also begins the arguments (SEP is a control token a skip_special_tokens decode
removes). A character no name holds (prose after the start marker) means no call: the text goes back
to the machine as content, without the start marker; so does a name the stream cuts short.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..calls import PartialCall, TrimmedArguments
from ..scan import JsonStrings


@dataclass(frozen=True)
class NamedJsonSpec:
    separator: str  # between the name and the JSON arguments


def _name_char(char: str) -> bool:
    return char.isalnum() or char in "._-:/"


@dataclass
class JsonNesting:
    """Bracket depth of streamed JSON text, outside string literals."""

    depth: int = 0
    strings: JsonStrings = field(default_factory=JsonStrings)

    def closes(self, text: str) -> int | None:
        """Advance over `text`; the length up to the bracket that closes the outermost value, if it comes."""
        for i, char in enumerate(text):
            if self.strings.step(char):
                continue
            if char in "{[":
                self.depth += 1
            elif char in "}]" and self.depth:
                self.depth -= 1
                if not self.depth:
                    return i + 1
        return None


class NamedJson:
    def __init__(self, spec: NamedJsonSpec, opener: str = "") -> None:
        self.spec = spec
        self.opener = opener  # the start marker the machine consumed, given back if no call follows
        self.calls: list[PartialCall] = []
        self.stray = ""  # raw text that is no call, shown as content
        self.name = ""
        self.pending = ""  # the end of the name that may begin SEP
        self.nesting: JsonNesting | None = None  # set once the arguments begin
        self.trimmed = TrimmedArguments()

    def feed(self, text: str) -> str | None:
        if self.nesting is None:
            buffer, self.pending = self.pending + text, ""
            head = self._head(buffer)
            if head is None:
                return None
            if isinstance(head, str):  # no call: everything read goes back as text
                return head
            at, skip = head
            self.name += buffer[:at]
            self.calls.append(PartialCall(name=self.name.strip()))
            self.nesting = JsonNesting()
            text = buffer[at + skip :]
        end = self.nesting.closes(text)
        if end is None:
            self.trimmed.add(self.calls[-1], text)
            return None
        self.trimmed.add(self.calls[-1], text[:end])
        return text[end:]

    def _head(self, buffer: str) -> tuple[int, int] | str | None:
        """Where the name ends in `buffer` and how long SEP is there (0: `{` follows directly);
        the text to hand back if no call follows; None while undecided (the name is growing)."""
        separator = self.spec.separator
        for i, char in enumerate(buffer):
            named = bool((self.name + buffer[:i]).strip())
            if buffer.startswith(separator, i):
                return i, len(separator)
            if char == "{" and named:
                return i, 0
            if separator.startswith(buffer[i:]):
                break
            if _name_char(char) or (char.isspace() and not named):
                continue
            text, self.name = self.name + buffer, ""
            return text
        else:
            i = len(buffer)
        self.name += buffer[:i]
        self.pending = buffer[i:]
        return None

    def finish(self) -> None:
        if self.nesting is None:
            self.stray += self.name + self.pending
