"""granite-20b-functioncalling: one `{"name", "arguments"}` object after each `<function_call>`."""

from __future__ import annotations

from fixtures.families import granite20b_function_call as f

from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar

SPEC = JsonArraySpec(bracketed=False)
GRAMMAR = Grammar(starts=(f.FUNCTION_CALL,), open=lambda marker, context: JsonArray(SPEC, marker))
