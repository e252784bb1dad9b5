"""Olmo 3: pythonic calls one per line inside `<function_calls>` … `</function_calls>`; `<think>` reasoning."""

from __future__ import annotations

from fixtures.families import olmo3_pythonic as f

from ..grammars.pythonic import PythonicList, PythonicSpec
from ..machine import Grammar

SPEC = PythonicSpec(close=f.CLOSE)
GRAMMAR = Grammar(starts=(f.OPEN,), open=lambda marker, context: PythonicList(SPEC), strays=(f.CLOSE,))
