"""Tencent Hy4: GLM-4.7's compact `<tool_call>NAME<arg_key>…` blocks inside `<tool_calls>`, read as Hy3's sections."""

from __future__ import annotations

from fixtures.families import hy4_arg_pairs as f

from ..grammars.arg_pairs import ArgPairsSection, ArgPairsSpec
from ..machine import Grammar

SPEC = ArgPairsSpec(open=f.FORMAT.open, close=f.FORMAT.close, key=f.FORMAT.key, key_end=f.FORMAT.key_end,
                    value=f.FORMAT.value, value_end=f.FORMAT.value_end)
GRAMMAR = Grammar(
    starts=(f.TOOL_CALLS,),
    open=lambda marker, context: ArgPairsSection(SPEC, f.END_TOOL_CALLS, context),
    strays=(f.END_TOOL_CALLS,),
)
