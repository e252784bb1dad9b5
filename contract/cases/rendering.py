"""Model text with its anatomy: which characters are markup, narration, reasoning or call payload.

Families render a scenario through a `TextBuilder`; the spans it records drive tokenization
(markup may become special tokens, payload never does), generic truncation, the conservation
check and the holdback metric.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from .catalog import Truncation


class Kind(Enum):
    MARKUP = "markup"
    CONTENT = "content"
    REASONING = "reasoning"
    CALL_NAME = "call_name"  # the function name or native id text of a call
    ARGUMENTS = "arguments"


class Role(Enum):
    """What a markup span closes: for generic truncation, and for joining the kept text (`contract.cases.kept`)."""

    NONE = ""
    SECTION_END = "section_end"
    CALL_END = "call_end"
    REASONING_END = "reasoning_end"
    MESSAGE_END = "message_end"  # one of several messages of shown text (Harmony's `<|end|>` of a preamble)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: Kind
    role: Role = Role.NONE
    call: int | None = None  # index of the call the span belongs to

    def shifted(self, by: int) -> Span:
        return replace(self, start=self.start + by, end=self.end + by)


@dataclass(frozen=True)
class Rendered:
    text: str
    spans: tuple[Span, ...]

    def pieces(self, kind: Kind) -> list[str]:
        return [self.text[s.start : s.end] for s in self.spans if s.kind is kind]

    def visible_mask(self) -> list[bool]:
        """Per character: does it belong to content or reasoning (what a stream may show as text)?"""
        mask = [False] * len(self.text)
        for s in self.spans:
            if s.kind in (Kind.CONTENT, Kind.REASONING):
                mask[s.start : s.end] = [True] * (s.end - s.start)
        return mask


class TextBuilder:
    """Appends text piece by piece, remembering what each piece is."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._spans: list[Span] = []
        self._length = 0

    def _add(self, text: str, kind: Kind, role: Role = Role.NONE, call: int | None = None) -> None:
        if not text:
            return
        self._spans.append(Span(self._length, self._length + len(text), kind, role, call))
        self._parts.append(text)
        self._length += len(text)

    def markup(self, text: str, role: Role = Role.NONE, call: int | None = None) -> None:
        self._add(text, Kind.MARKUP, role, call)

    def content(self, text: str) -> None:
        self._add(text, Kind.CONTENT)

    def reasoning(self, text: str) -> None:
        self._add(text, Kind.REASONING)

    def call_name(self, text: str, call: int) -> None:
        self._add(text, Kind.CALL_NAME, call=call)

    def arguments(self, text: str, call: int) -> None:
        self._add(text, Kind.ARGUMENTS, call=call)

    def build(self) -> Rendered:
        return Rendered("".join(self._parts), tuple(self._spans))


def _remove_span(rendered: Rendered, index: int) -> Rendered:
    gone = rendered.spans[index]
    width = gone.end - gone.start
    text = rendered.text[: gone.start] + rendered.text[gone.end :]
    spans = tuple(
        s if s.end <= gone.start else s.shifted(-width) for i, s in enumerate(rendered.spans) if i != index
    )
    return Rendered(text, spans)


def _cut(rendered: Rendered, at: int) -> Rendered:
    spans = tuple(replace(s, end=min(s.end, at)) for s in rendered.spans if s.start < at)
    return Rendered(rendered.text[:at], spans)


def _last(rendered: Rendered, *, kind: Kind | None = None, role: Role | None = None) -> int | None:
    for i in range(len(rendered.spans) - 1, -1, -1):
        s = rendered.spans[i]
        if (kind is None or s.kind is kind) and (role is None or s.role is role):
            return i
    return None


def truncate(rendered: Rendered, truncation: Truncation) -> Rendered:
    """Apply a case's truncation to fully rendered text, the same way for every family.

    SECTION_END cuts right before the last section end (or, without sections, the last call end);
    IN_ARGUMENTS cuts in the middle of the last call's arguments; IN_NAME in the middle of the last call's name
    (the first place it is written: its header, cut before any argument); REASONING_UNCLOSED removes the last
    reasoning closer, so whatever followed it now sits inside reasoning that never closes.
    """
    if truncation is Truncation.NONE:
        return rendered
    if truncation is Truncation.SECTION_END:
        index = _last(rendered, role=Role.SECTION_END)
        if index is None:
            index = _last(rendered, role=Role.CALL_END)
        if index is None:
            raise ValueError("SECTION_END truncation: the rendering marks no section or call end")
        return _cut(rendered, rendered.spans[index].start)
    if truncation is Truncation.IN_ARGUMENTS:
        index = _last(rendered, kind=Kind.ARGUMENTS)
        if index is None:
            raise ValueError("IN_ARGUMENTS truncation: the rendering marks no arguments")
        span = rendered.spans[index]
        return _cut(rendered, span.start + max(1, (span.end - span.start) // 2))
    if truncation is Truncation.IN_NAME:
        index = _last(rendered, kind=Kind.CALL_NAME)
        if index is None:
            raise ValueError("IN_NAME truncation: the rendering marks no call name")
        last_call = rendered.spans[index].call
        span = next(s for s in rendered.spans if s.kind is Kind.CALL_NAME and s.call == last_call)  # its header's
        return _cut(rendered, span.start + max(1, (span.end - span.start) // 2))
    index = _last(rendered, role=Role.REASONING_END)
    if index is None:
        raise ValueError("REASONING_UNCLOSED: the rendering marks no reasoning closer")
    return _remove_span(rendered, index)
