"""K2 Horizon (IFM): a `<ifm|tool_calls>` group of `<ifm|tool_call>` name + key/value-pair blocks.

Each block is read by the arg_pairs codec (an `<ifm|arg_type>` tag between key and value is skipped: the
declared schema types the value). Whitespace between blocks is framing; other text inside the group is
narration, shown as content. Prose right after the group opener, before any block, is no call: the group
ends and the prose is content.
"""

from __future__ import annotations

from fixtures.families import k2_horizon_ifm as f
from parsers import RequestContext

from ..calls import PartialCall
from ..grammars.arg_pairs import ArgPairs, ArgPairsSpec
from ..grammars.stepper import not_a_start
from ..machine import Grammar
from ..scan import find_first, partial_tail

BLOCK = ArgPairsSpec(open=f.TOOL_CALL, close=f.END_TOOL_CALL, key=f.ARG_KEY, key_end=f.END_ARG_KEY,
                     value=f.ARG_VALUE, value_end=f.END_ARG_VALUE, type=f.ARG_TYPE, type_end=f.END_ARG_TYPE)
BETWEEN = (f.TOOL_CALL, f.END_TOOL_CALLS)


class IfmGroup:
    """One group: blocks until `</ifm|tool_calls>`."""

    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.done: list[PartialCall] = []
        self.block: ArgPairs | None = None
        self.buffer = ""
        self.stray = ""
        self.pending = ""  # whitespace since the last narration: kept until more narration follows it
        self.started = False  # a block (or the group end) has been met

    @property
    def calls(self) -> list[PartialCall]:
        return self.done + (self.block.calls if self.block else [])

    def _take_stray(self) -> None:
        if self.block is not None and self.block.stray:
            self.stray += self.block.stray
            self.block.stray = ""

    def feed(self, text: str) -> str | None:
        self.buffer += text
        while True:
            if self.block is not None:
                text, self.buffer = self.buffer, ""
                rest = self.block.feed(text)
                self._take_stray()
                if rest is None:
                    return None
                self.done += self.block.calls
                self.block, self.buffer = None, rest
                continue
            if not self.started and not_a_start(self.buffer, BETWEEN):
                back, self.buffer = self.buffer, ""
                return back  # prose after the opener: no call
            hit = find_first(self.buffer, BETWEEN)
            if hit is None:
                keep = partial_tail(self.buffer, BETWEEN)
                self._narration(self.buffer[: len(self.buffer) - keep])
                self.buffer = self.buffer[len(self.buffer) - keep :]
                return None
            at, marker = hit
            self._narration(self.buffer[:at])
            self.buffer = self.buffer[at + len(marker) :]
            self.started, self.pending = True, ""
            if marker == f.END_TOOL_CALLS:
                return self.buffer
            self.block = ArgPairs(BLOCK, self.context)

    def _narration(self, text: str) -> None:
        if text.strip():
            self.stray += self.pending + text
            self.pending = ""
        else:
            self.pending += text

    def finish(self) -> None:
        if self.block is not None:
            self.block.finish()
            self._take_stray()
            self.done += self.block.calls
            self.block = None
        self._narration(self.buffer)
        self.buffer = ""


GRAMMAR = Grammar(
    starts=(f.TOOL_CALLS,),
    open=lambda marker, context: IfmGroup(context),
    strays=(f.END_TOOL_CALLS, f.END_TOOL_CALL, f.ARG_KEY, f.END_ARG_KEY, f.ARG_TYPE, f.END_ARG_TYPE,
            f.ARG_VALUE, f.END_ARG_VALUE),
)
