"""Cohere Command 3: the calls as one JSON list in `<|START_ACTION|>`, the answer in `<|START_RESPONSE|>`."""

from __future__ import annotations

from fixtures.families import cohere_action as f
from parsers import RequestContext

from ..grammars.content_block import ContentBlock, ContentBlockSpec
from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar, SectionCodec

ACTION = JsonArraySpec(close=f.END_ACTION, name_keys=("tool_name",), argument_keys=("parameters",),
                       id_keys=("tool_call_id",))
RESPONSE = ContentBlockSpec(close=f.END_RESPONSE, strays=(f.START_ACTION, f.END_ACTION))


def _open(marker: str, context: RequestContext) -> SectionCodec:
    return ContentBlock(RESPONSE) if marker == f.START_RESPONSE else JsonArray(ACTION, marker)


GRAMMAR = Grammar(starts=(f.START_ACTION, f.START_RESPONSE), open=_open, strays=(f.END_ACTION, f.END_RESPONSE))
