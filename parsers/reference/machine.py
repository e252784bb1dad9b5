"""The reference streaming machine: reasoning, content and tool sections, shared by every family.

It never releases text that could still be the start of a marker, and one-shot parsing is the
same machine fed a single delta, so batch and stream cannot drift apart. What differs between
families is the `Grammar` (which markers open a section, and the codec that reads one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from parsers import Delta, ReasoningStyle, RequestContext

from .calls import Emitter, PartialCall
from .scan import find_first, partial_tail


class SectionCodec(Protocol):
    """Reads one tool section (or call block) from the text after its opening marker."""

    calls: list[PartialCall]
    stray: str  # raw text that turned out to be no call: the machine shows it as content

    def feed(self, text: str) -> str | None:
        """Consume text; once the section has ended, return the text that follows it."""
        ...

    def finish(self) -> None:
        """End of stream inside the section: complete what can be completed."""
        ...


@dataclass(frozen=True)
class Grammar:
    """Which markers open a tool section, and the codec that reads one (given the marker that opened it).

    `leading` markers open a section only at the very start of the output (whitespace aside) and
    stay in the text the codec reads: the `{` of Llama's bare JSON call, the `[` of a pythonic list.
    `strays` are the family's markers that mean nothing outside a section (a lone section end, an
    argument marker): met in content, they are dropped, never shown.
    """

    starts: tuple[str, ...]
    open: Callable[[str, RequestContext], SectionCodec]
    leading: tuple[str, ...] = ()
    strays: tuple[str, ...] = ()


class State(Enum):
    START = "start"  # nothing decided yet: reasoning may open
    CONTENT = "content"
    REASONING = "reasoning"
    HELD = "held"  # reasoning from a section start on: a quoted call (a closer follows) or a call (the end)
    SECTION = "section"


class Machine:
    """Reasoning, content and sections over streamed text.

    A section start met inside reasoning is held with all text after it: if the reasoning closer
    follows, the held text was reasoning that quotes a call (reasoning.quoted_call); if the stream
    ends first, the start ended the reasoning and the held text is read as the section
    (reasoning.tool_inside, reasoning.implicit_end). Where the prompt prefilled the opener, an
    opener the output writes again at its start is dropped (reasoning.reopened).
    """

    def __init__(self, grammar: Grammar, reasoning: ReasoningStyle | None, context: RequestContext) -> None:
        # tool_choice "none": no section opens, so a call the model writes anyway stays in content as written
        self.grammar = Grammar((), grammar.open) if context.tool_choice == "none" else grammar
        self.reasoning = reasoning
        self.context = context
        prefilled = reasoning is not None and reasoning.prefilled(context)
        self.state = State.REASONING if prefilled else State.START
        self.reopen = prefilled  # the prompt opened reasoning: an opener the output writes again is dropped
        self.buffer = ""
        self.held = ""  # in HELD: the tool-section start the held text (in the buffer) follows
        self.scanned = 0  # in HELD: how much of the buffer is known to hold no closer
        self.codec: SectionCodec | None = None
        self.base = 0  # index of the current section's first call
        self.fresh = True  # no content but whitespace released yet: leading markers still count
        self.out = Emitter.for_request(context)

    def _markers(self) -> Sequence[str]:
        style = self.reasoning
        if self.state is State.REASONING and style:
            return (style.closer, *style.implicit_end)
        if self.state is State.START and style:
            return (style.opener, *self.grammar.starts, *self.grammar.strays)
        if self.state is State.CONTENT and style and style.interleaved:
            return (style.opener, *self.grammar.starts, *self.grammar.strays)
        return (*self.grammar.starts, *self.grammar.strays)

    def _release(self, text: str) -> None:
        reasoning = self.state is State.REASONING
        self.fresh = self.fresh and (reasoning or not text.strip())
        self.out.text("reasoning" if reasoning else "content", text)

    def _leading(self, final: bool) -> bool:
        """At the start of the output, open a section on a leading marker; True while undecided."""
        head = self.buffer.lstrip()
        for marker in self.grammar.leading:
            if head.startswith(marker):
                self._release(self.buffer[: len(self.buffer) - len(head)])
                self.buffer = head
                self._enter(marker)
                return False
        if not final and (not head or any(m.startswith(head) for m in self.grammar.leading)):
            return True
        self.fresh = False
        return False

    def _enter(self, marker: str) -> None:
        style = self.reasoning
        reasoning = self.state is State.REASONING
        if reasoning and style and marker in style.implicit_end and marker != style.closer:
            # a section start inside reasoning: a quoted call if the closer still comes, else the call
            self.held, self.scanned = marker, 0
            self.state = State.HELD
        elif not reasoning and marker in self.grammar.strays and marker not in self.grammar.starts:
            # a marker that means nothing outside a section: dropped where it stands
            if self.state is State.START:
                self.state = State.CONTENT
        elif marker in self.grammar.starts or marker in self.grammar.leading:
            self.codec = self.grammar.open(marker, self.context)
            self.base = self.out.calls_started
            self.state = State.SECTION
        elif style and marker == style.opener:
            self.state = State.REASONING
        else:
            self.state = State.CONTENT

    def _undecided_start(self, final: bool) -> bool:
        """At the very start, hold leading whitespace and a possible opener prefix."""
        assert self.reasoning is not None
        head = self.buffer.lstrip()
        if head.startswith(self.reasoning.opener):
            self.buffer = head
            return False
        if not final and (not head or self.reasoning.opener.startswith(head)):
            return True
        self.state = State.CONTENT
        return False

    def _reopened(self, final: bool) -> bool:
        """Reasoning the prompt opened: drop an opener the output writes again; True while undecided."""
        assert self.reasoning is not None
        head = self.buffer.lstrip()
        if head.startswith(self.reasoning.opener):
            self.buffer = head[len(self.reasoning.opener) :]
            self.reopen = False
            return False
        if not final and (not head or self.reasoning.opener.startswith(head)):
            return True
        self.reopen = False
        return False

    def _held(self, final: bool) -> bool:
        """Reasoning held from a section start: True when scanning goes on (closer found, or EOS replay)."""
        assert self.reasoning is not None
        closer = self.reasoning.closer
        at = self.buffer.find(closer, self.scanned)
        if at != -1:
            # the closer came: the section start and all after it were reasoning text (a quoted call)
            self.out.text("reasoning", self.held + self.buffer[:at])
            self.buffer = self.buffer[at + len(closer) :]
            self.held, self.state = "", State.REASONING
            self._enter(closer)
            return True
        if not final:
            self.scanned = max(0, len(self.buffer) - len(closer) + 1)
            return False
        # the stream ended inside reasoning: the section start ended it, read the held text as the section
        marker, self.held = self.held, ""
        self.state = State.CONTENT
        self._enter(marker)
        return True

    def _section(self) -> bool:
        """Feed the open section; True when it ended and scanning goes on after it."""
        assert self.codec is not None
        text, self.buffer = self.buffer, ""
        leftover = self.codec.feed(text)
        self._collect(ended=leftover is not None)
        if leftover is None:
            return False
        self.codec, self.state, self.buffer = None, State.CONTENT, leftover
        return True

    def _collect(self, ended: bool, named: int | None = None) -> None:
        """Announce the open section's calls (and any stray text) as far as they are known; `named`: only the calls
        named before the output was cut, and no stray text."""
        assert self.codec is not None
        self.out.sync(self.base, self.codec.calls if named is None else self.codec.calls[:named])
        if named is not None:
            self.codec.stray = ""
        if self.codec.stray:
            self.out.text("content", self.codec.stray)
            self.codec.stray = ""

    def _keep(self, markers: Sequence[str]) -> int:
        """How much of the buffer's end to withhold: exactly what could still begin a marker."""
        return partial_tail(self.buffer, markers)

    def _run(self, final: bool) -> None:
        while True:
            if self.state is State.SECTION:
                if not self.buffer or not self._section():
                    return
                continue
            if self.state is State.HELD:
                if not self._held(final):
                    return
                continue
            if self.reopen and self.state is State.REASONING and self._reopened(final):
                return
            if self.state is State.START and self.reasoning and self._undecided_start(final):
                return
            if self.fresh and self.grammar.leading and self.state is not State.REASONING:
                if self._leading(final):
                    return
                if self.state is State.SECTION:
                    continue
            markers = self._markers()
            hit = find_first(self.buffer, markers)
            if hit:
                at, marker = hit
                self._release(self.buffer[:at])
                self.buffer = self.buffer[at + len(marker) :]
                self._enter(marker)
                continue
            keep = 0 if final else self._keep(markers)
            self._release(self.buffer[: len(self.buffer) - keep])
            self.buffer = self.buffer[len(self.buffer) - keep :]
            return

    def feed(self, text: str) -> list[Delta]:
        self.buffer += text
        self._run(final=False)
        return self.out.take()

    def finish(self, stop: str) -> list[Delta]:
        self._run(final=True)
        if self.codec is not None:
            named = sum(call.name is not None for call in self.codec.calls)
            self.codec.finish()
            # max_tokens cut the section: a call the codec names only now, at the end, and text it cannot read as
            # a call are a call whose header was cut (tool.truncated_header): neither a call nor content
            self._collect(ended=False, named=named if stop == "length" else None)
        reason = "length" if stop == "length" else ("tool_calls" if self.out.calls_started else "stop")
        return [*self.out.take(), Delta(finish_reason=reason)]
