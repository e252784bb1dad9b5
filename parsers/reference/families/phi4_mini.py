"""Phi-4-mini: a JSON list of calls after the plain text `functools`."""

from __future__ import annotations

from fixtures.families import phi4_mini as f

from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar

SPEC = JsonArraySpec(plain_opener=True)  # `functools` is a plain word
GRAMMAR = Grammar(starts=(f.FUNCTOOLS,), open=lambda marker, context: JsonArray(SPEC, marker))
