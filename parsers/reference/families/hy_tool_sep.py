"""Tencent Hy3: `<tool_call>NAME<tool_sep>` blocks of key/value tag pairs inside `<tool_calls>`."""

from __future__ import annotations

from fixtures.families import hy_tool_sep as f

from ..grammars.arg_pairs import ArgPairsSection, ArgPairsSpec
from ..machine import Grammar

SPEC = ArgPairsSpec(open=f.TOOL_CALL, close=f.END_TOOL_CALL, key=f.ARG_KEY, key_end=f.END_ARG_KEY,
                    value=f.ARG_VALUE, value_end=f.END_ARG_VALUE, name_end=(f.TOOL_SEP, "\n"))
GRAMMAR = Grammar(
    starts=(f.TOOL_CALLS,),
    open=lambda marker, context: ArgPairsSection(SPEC, f.END_TOOL_CALLS, context),
    strays=(f.END_TOOL_CALLS,),
)
