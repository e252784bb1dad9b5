"""Sections of marker-delimited calls: BEGIN ( CALL_BEGIN head SEP json [FENCE] CALL_END )* END.

Kimi K2 (head = `functions.NAME:IDX`, a native id), DeepSeek V3.1 (head = NAME), DeepSeek V3
(head = `function<｜tool▁sep｜>NAME`, SEP the code fence opening ```` ```json ````, FENCE its closing
```` ``` ````). The JSON is streamed as written; a call end (or fence) inside a JSON string is text,
not a marker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..calls import PartialCall, TrimmedArguments
from ..scan import JsonStrings, find_first, partial_tail
from .gap import Gap

Head = tuple[str, str | None]  # (name, native id or None)


@dataclass(frozen=True)
class DelimitedSpec:
    ends: tuple[str, ...]  # section end markers
    call_begin: str
    separator: str  # between the head and the arguments
    call_end: str
    head: Callable[[str], Head]
    fence: str = ""  # text that closes the arguments before CALL_END, outside JSON strings; "" for none


class _At(Enum):
    BETWEEN = 0
    HEAD = 1
    ARGUMENTS = 2
    FENCED = 3  # after the closing fence, before the call end


class DelimitedSection:
    def __init__(self, spec: DelimitedSpec) -> None:
        self.spec = spec
        self.calls: list[PartialCall] = []
        self.at = _At.BETWEEN
        self.buffer = ""
        self.head = ""
        self.strings = JsonStrings()
        self.trimmed = TrimmedArguments()
        self.stray = ""  # raw text that is no call, shown as content
        self.gap = Gap()  # the text since the last call

    def feed(self, text: str) -> str | None:
        self.buffer += text
        spec = self.spec
        while True:
            if self.at is _At.ARGUMENTS:
                fence = (spec.fence,) if spec.fence else ()
                at, marker = self.strings.find_outside(self.buffer, (spec.call_end, *spec.ends, spec.call_begin, *fence))
                self.trimmed.add(self.calls[-1], self.buffer[:at])
                self.buffer = self.buffer[at:]
                if marker is None:
                    return None
                if marker in (spec.call_end, spec.fence):
                    self.buffer = self.buffer[len(marker) :]
                after = _At.FENCED if marker == spec.fence else _At.BETWEEN
                self.at, self.trimmed, self.strings = after, TrimmedArguments(), JsonStrings()
                continue
            if self.at is _At.FENCED:
                hit = find_first(self.buffer, (spec.call_end, spec.call_begin, *spec.ends))
                if hit is None:
                    keep = partial_tail(self.buffer, (spec.call_end, spec.call_begin, *spec.ends))
                    self._stray(self.buffer[: len(self.buffer) - keep])
                    self.buffer = self.buffer[len(self.buffer) - keep :]
                    return None
                at, marker = hit
                self._stray(self.buffer[:at])
                self.buffer = self.buffer[at + len(marker) if marker == spec.call_end else at :]
                self.at = _At.BETWEEN
                continue
            markers = (spec.separator, spec.call_end) if self.at is _At.HEAD else (spec.call_begin, *spec.ends)
            hit = find_first(self.buffer, markers)
            if hit is None:
                keep = partial_tail(self.buffer, markers)
                consumed, self.buffer = self.buffer[: len(self.buffer) - keep], self.buffer[len(self.buffer) - keep :]
                if self.at is _At.HEAD:
                    self.head += consumed
                else:
                    self._stray(consumed)
                return None
            at, marker = hit
            before, self.buffer = self.buffer[:at], self.buffer[at + len(marker) :]
            if self.at is _At.HEAD:
                self.head += before
                self._start_call()
                if marker == spec.call_end:  # a call without arguments
                    self.calls[-1].arguments = "{}"
                    self.at = _At.BETWEEN
                continue
            self._stray(before)
            self.stray += self.gap.end()
            if marker == spec.call_begin:
                self.at, self.head = _At.HEAD, ""
                continue
            return self.buffer  # the section ended

    def _stray(self, text: str) -> None:
        self.stray += self.gap.add(text)

    def _start_call(self) -> None:
        name, native = self.spec.head(self.head.strip())
        self.calls.append(PartialCall(name=name, id=native))
        self.at = _At.ARGUMENTS

    def finish(self) -> None:
        if self.at is _At.ARGUMENTS:
            self.trimmed.add(self.calls[-1], self.buffer)
        elif self.at is _At.HEAD:
            self._stray(self.spec.call_begin + self.head + self.buffer)
        else:
            self._stray(self.buffer)
        self.stray += self.gap.end()
        self.buffer = ""
