"""Each family's grammar, described by its markers: the only per-family part of the reference parsers."""

from __future__ import annotations

from fixtures.families import hermes, kimi_k2, qwen3_coder

from .grammars.delimited import DelimitedSection, DelimitedSpec, Head
from .grammars.json_block import JsonBlock, JsonBlockSpec
from .grammars.xml_function import XmlFunction, XmlFunctionSpec
from .machine import Grammar


def kimi_head(head: str) -> Head:
    """`functions.NAME:IDX` (or `NAME:IDX`): the name, and the whole head as the native id."""
    name = head.removeprefix("functions.")
    name = name.rsplit(":", 1)[0] if ":" in name else name
    return name, head


_KIMI = DelimitedSpec(
    ends=(kimi_k2.SECTION_END, kimi_k2.SECTION_END_SINGULAR),
    call_begin=kimi_k2.CALL_BEGIN,
    separator=kimi_k2.ARGUMENT_BEGIN,
    call_end=kimi_k2.CALL_END,
    head=kimi_head,
)
_HERMES = JsonBlockSpec(open=hermes.TOOL_CALL, close=hermes.END_TOOL_CALL)
_QWEN3_CODER = XmlFunctionSpec(close=qwen3_coder.END_TOOL_CALL)

GRAMMARS: dict[str, Grammar] = {
    "kimi_k2": Grammar(
        starts=(kimi_k2.SECTION_BEGIN, kimi_k2.SECTION_BEGIN_SINGULAR),
        open=lambda marker, context: DelimitedSection(_KIMI),
    ),
    "hermes": Grammar(starts=(hermes.TOOL_CALL,), open=lambda marker, context: JsonBlock(_HERMES)),
    "qwen3_coder": Grammar(
        starts=(qwen3_coder.TOOL_CALL,), open=lambda marker, context: XmlFunction(_QWEN3_CODER, context)
    ),
}
