"""PLaMo 3: delimited request blocks whose head is `<|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>`.

The arguments opener (with its `<|plamo:constrain|>json<|plamo:msg|>` header) separates the head from the JSON;
`<|plamo:end_tool_arguments:plamo|>` closes the JSON as DeepSeek V3's fence does, before the request's end.
`GuardedSection` reads a requests opener followed by anything but a request as no section at all.
"""

from __future__ import annotations

from fixtures.families import plamo3 as f

from ..grammars.delimited import DelimitedSpec, Head
from ..machine import Grammar
from .deepseek_v3_1 import GuardedSection


def named_head(head: str) -> Head:
    """`<|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>`: the name."""
    return head.removeprefix(f.TOOL_NAME).partition(f.END_TOOL_NAME)[0].strip(), None


SPEC = DelimitedSpec(
    ends=(f.END_TOOL_REQUESTS,),
    call_begin=f.TOOL_REQUEST,
    separator=f.ARGUMENTS_OPEN,
    call_end=f.END_TOOL_REQUEST,
    head=named_head,
    fence=f.END_TOOL_ARGUMENTS,
)
GRAMMAR = Grammar(
    starts=(f.TOOL_REQUESTS,),
    open=lambda marker, context: GuardedSection(SPEC),
    strays=(f.END_TOOL_REQUESTS, f.END_TOOL_REQUEST, f.END_TOOL_NAME, f.END_TOOL_ARGUMENTS),
)
