"""LFM2: a pythonic call list between `<|tool_call_start|>` and `<|tool_call_end|>`, narration around it."""

from __future__ import annotations

from fixtures.families import lfm2_pythonic as f

from ..grammars.pythonic import PythonicList, PythonicSpec
from ..machine import Grammar

SPEC = PythonicSpec(end=f.END)
GRAMMAR = Grammar(starts=(f.START,), open=lambda marker, context: PythonicList(SPEC), strays=(f.END,))
