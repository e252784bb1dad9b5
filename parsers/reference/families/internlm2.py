"""InternLM2 / Intern-S1: one JSON object per `<|action_start|><|plugin|>` … `<|action_end|>` block."""

from __future__ import annotations

from fixtures.families import internlm2 as f

from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar

SPEC = JsonBlockSpec(open=f.OPEN, close=f.ACTION_END)
GRAMMAR = Grammar(starts=(f.OPEN,), open=lambda marker, context: JsonBlock(SPEC), strays=(f.ACTION_END,))
