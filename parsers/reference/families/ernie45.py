"""ERNIE-4.5: Hermes JSON calls in `<tool_call>` blocks; `<response>` blocks hold the answer itself."""

from __future__ import annotations

from fixtures.families import ernie45 as f
from parsers import RequestContext

from ..grammars.content_block import ContentBlock, ContentBlockSpec
from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar, SectionCodec

CALL = JsonBlockSpec(open=f.TOOL_CALL, close=f.END_TOOL_CALL)
RESPONSE = ContentBlockSpec(close=f.END_RESPONSE)


def _open(marker: str, context: RequestContext) -> SectionCodec:
    return ContentBlock(RESPONSE) if marker == f.RESPONSE else JsonBlock(CALL)


GRAMMAR = Grammar(starts=(f.TOOL_CALL, f.RESPONSE), open=_open, strays=(f.END_TOOL_CALL,))
