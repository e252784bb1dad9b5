"""Swiss AI Apertus: a JSON list of `{"NAME": {args}}` objects between `<|tools_prefix|>` and `<|tools_suffix|>`.

The inner section (`<|inner_prefix|>…<|inner_suffix|>`) is the family's reasoning style, read by the machine;
a tools block inside an inner section the output never closes is a call (reasoning.tool_inside).
"""

from __future__ import annotations

from fixtures.families import apertus as f

from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar

SPEC = JsonArraySpec(close=f.TOOLS_SUFFIX, name_as_key=True)
GRAMMAR = Grammar(starts=(f.TOOLS_PREFIX,), open=lambda marker, context: JsonArray(SPEC, marker),
                  strays=(f.TOOLS_SUFFIX,))
