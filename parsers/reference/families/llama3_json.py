"""Llama 3.1 / 3.3: bare `{"name", "parameters"}` objects joined by `;`, at the start or after `<|python_tag|>`.

After narration a bare object on a new line is a call only when it ends the output (Llama writes its
explanation first, then the JSON); JSON quoted in the middle of an answer stays content.
"""

from __future__ import annotations

from fixtures.families import llama3_json as f
from parsers import RequestContext

from ..grammars.json_array import JsonArray, JsonArraySpec, TrailingCalls
from ..machine import Grammar, SectionCodec

BARE = "{"  # a call written at the very start of the output, with no tag
TRAILING = "\n{"  # a bare call on its own line after narration
SPEC = JsonArraySpec(bracketed=False, separator=f.SEPARATOR.strip())


def _open(marker: str, context: RequestContext) -> SectionCodec:
    if marker == TRAILING:
        return TrailingCalls(SPEC, marker)
    return JsonArray(SPEC, "" if marker == BARE else marker)


GRAMMAR = Grammar(starts=(f.PYTHON_TAG, TRAILING), open=_open, leading=(BARE,))
