"""Cohere Command 3: the calls as one JSON list in `<|START_ACTION|>`, the answer in `<|START_RESPONSE|>`."""

from __future__ import annotations

from fixtures.families import cohere_action as f
from parsers import RequestContext

from ..grammars.content_block import ContentBlock, ContentBlockSpec
from ..grammars.json_array import JsonArray, JsonArraySpec
from ..machine import Grammar, SectionCodec

ACTION = JsonArraySpec(close=f.END_ACTION, name_keys=("tool_name",), argument_keys=("parameters",),
                       id_keys=("tool_call_id",))


def grammar(start_answer: str, end_answer: str) -> Grammar:
    """A Cohere grammar whose answer block is START_ANSWER…END_ANSWER (Command 3 and Command 4 differ only there)."""
    answer = ContentBlockSpec(close=end_answer, strays=(f.START_ACTION, f.END_ACTION))

    def _open(marker: str, context: RequestContext) -> SectionCodec:
        return ContentBlock(answer) if marker == start_answer else JsonArray(ACTION, marker)

    return Grammar(starts=(f.START_ACTION, start_answer), open=_open, strays=(f.END_ACTION, end_answer))


GRAMMAR = grammar(f.START_RESPONSE, f.END_RESPONSE)
