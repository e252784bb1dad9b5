"""DeepSeek V3 / R1-0528: delimited calls whose JSON sits in a ```json fence."""

from __future__ import annotations

from fixtures.families import deepseek_v3 as f

from ..grammars.delimited import DelimitedSpec, Head
from ..machine import Grammar
from .deepseek_v3_1 import GuardedSection


def typed_head(head: str) -> Head:
    """`TYPE<｜tool▁sep｜>NAME` (the type is always `function`): the name."""
    return head.rpartition(f.TOOL_SEP)[2].strip(), None


SPEC = DelimitedSpec(
    ends=(f.CALLS_END,),
    call_begin=f.CALL_BEGIN,
    separator=f.FENCE_OPEN,
    call_end=f.CALL_END,
    head=typed_head,
    fence=f.FENCE_CLOSE,
)
GRAMMAR = Grammar(
    starts=(f.CALLS_BEGIN,),
    open=lambda marker, context: GuardedSection(SPEC),
    strays=(f.CALLS_END, f.CALL_END, f.TOOL_SEP),
)
