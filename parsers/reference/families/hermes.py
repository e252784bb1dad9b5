"""Hermes / Qwen2.5 / Qwen3: one JSON object per `<tool_call>` block."""

from __future__ import annotations

from fixtures.families import hermes as f

from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar

SPEC = JsonBlockSpec(open=f.TOOL_CALL, close=f.END_TOOL_CALL)
GRAMMAR = Grammar(starts=(f.TOOL_CALL,), open=lambda marker, context: JsonBlock(SPEC), strays=(f.END_TOOL_CALL,))
