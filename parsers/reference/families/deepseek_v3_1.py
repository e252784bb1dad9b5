"""DeepSeek V3.1: delimited calls whose head is the bare function name.

`GuardedSection` (shared with Kimi K2 and DeepSeek V3) reads a section start followed by anything
but a call or the section end as no section at all: the text after the marker is content.
"""

from __future__ import annotations

from fixtures.families import deepseek_v3_1 as f

from ..grammars.delimited import DelimitedSection, DelimitedSpec, Head
from ..machine import Grammar


class GuardedSection(DelimitedSection):
    """A delimited section that is one only if a call (or the section end) follows its start marker."""

    def __init__(self, spec: DelimitedSpec) -> None:
        super().__init__(spec)
        self.opened = False  # a call begin or section end seen first: a section indeed

    def feed(self, text: str) -> str | None:
        if self.opened:
            return super().feed(text)
        self.buffer += text
        head = self.buffer.lstrip()
        openers = (self.spec.call_begin, *self.spec.ends)
        if any(head.startswith(m) for m in openers):
            self.opened = True
            text, self.buffer = self.buffer, ""
            return super().feed(text)
        if not head or any(m.startswith(head) for m in openers):
            return None  # undecided
        rest, self.buffer = self.buffer, ""
        return rest  # not a call: the section ends at once, the text goes on as content

    def finish(self) -> None:
        if self.opened:
            super().finish()
        else:
            self._stray(self.buffer)
            self.buffer = ""


def bare_head(head: str) -> Head:
    return head, None


SPEC = DelimitedSpec(
    ends=(f.CALLS_END,),
    call_begin=f.CALL_BEGIN,
    separator=f.TOOL_SEP,
    call_end=f.CALL_END,
    head=bare_head,
)
GRAMMAR = Grammar(
    starts=(f.CALLS_BEGIN,),
    open=lambda marker, context: GuardedSection(SPEC),
    strays=(f.CALLS_END, f.CALL_END, f.TOOL_SEP),
)
