"""Gemma 4: `call:NAME{…}` in `<|tool_call>` blocks (one per block, or several in one), strings between `<|"|>`
delimiters."""

from __future__ import annotations

from fixtures.families import gemma4 as f

from ..grammars.gemma_call import GemmaCall, GemmaCallSpec
from ..machine import Grammar

SPEC = GemmaCallSpec(close=f.END_TOOL_CALL, quote=f.QUOTE, prefix=f.CALL_PREFIX)
GRAMMAR = Grammar(starts=(f.TOOL_CALL,), open=lambda marker, context: GemmaCall(SPEC),
                  strays=(f.END_TOOL_CALL, f.QUOTE))
