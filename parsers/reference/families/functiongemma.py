"""FunctionGemma: one `call:NAME{…}` per `<start_function_call>` block, strings between `<escape>` delimiters."""

from __future__ import annotations

from fixtures.families import functiongemma as f

from ..grammars.gemma_call import GemmaCall, GemmaCallSpec
from ..machine import Grammar

SPEC = GemmaCallSpec(close=f.END, quote=f.ESCAPE, prefix=f.CALL_PREFIX)
GRAMMAR = Grammar(starts=(f.START,), open=lambda marker, context: GemmaCall(SPEC), strays=(f.END, f.ESCAPE))
