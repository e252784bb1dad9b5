"""LongCat-Flash: one JSON object per `<longcat_tool_call>` block (Hermes with its own tags)."""

from __future__ import annotations

from fixtures.families import longcat as f

from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar

SPEC = JsonBlockSpec(open=f.TOOL_CALL, close=f.END_TOOL_CALL)
GRAMMAR = Grammar(starts=(f.TOOL_CALL,), open=lambda marker, context: JsonBlock(SPEC), strays=(f.END_TOOL_CALL,))
