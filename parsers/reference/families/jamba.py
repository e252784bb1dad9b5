"""AI21 Jamba: a JSON list of calls between `<tool_calls>` and `</tool_calls>`."""

from __future__ import annotations

from fixtures.families import jamba as f

from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar

SPEC = JsonArraySpec(close=f.END_TOOL_CALLS)
GRAMMAR = Grammar(starts=(f.TOOL_CALLS,), open=lambda marker, context: JsonArray(SPEC, marker),
                  strays=(f.END_TOOL_CALLS,))
