"""Llama 3.2 / Llama 4 pythonic: a Python list of keyword-argument calls, bare or in <|python_start|>."""

from __future__ import annotations

from fixtures.families import pythonic as f

from ..grammars.pythonic import PythonicList, PythonicSpec
from ..machine import Grammar

SPEC = PythonicSpec(end=f.END)
GRAMMAR = Grammar(starts=(f.START,), open=lambda marker, context: PythonicList(SPEC), leading=(f.OPEN,),
                  strays=(f.END,))
