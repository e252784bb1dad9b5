"""Salesforce xLAM-2: one bare JSON list of `{"name", "arguments"}` calls, only at the start of the output."""

from __future__ import annotations

from fixtures.families import xlam_json as f

from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar

# the list's own `[` opens the output: text unless a call object follows it
SPEC = JsonArraySpec(argument_keys=("arguments",), plain_bracket=True)
GRAMMAR = Grammar(starts=(), open=lambda marker, context: JsonArray(SPEC), leading=(f.OPEN,))
