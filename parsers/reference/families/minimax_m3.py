"""MiniMax-M3: invokes inside `]<]minimax[>[<tool_call>`, arguments as elements named after their keys."""

from __future__ import annotations

from fixtures.families import minimax_m3 as f

from ..grammars.xml_element import XmlElement, XmlElementSpec
from ..machine import Grammar

SPEC = XmlElementSpec(ends=(f.END_TOOL_CALL,), invoke=f.INVOKE, invoke_end=f.INVOKE_END, namespace=f.NS, item=f.ITEM)
GRAMMAR = Grammar(starts=(f.TOOL_CALL,), open=lambda marker, context: XmlElement(SPEC, context),
                  strays=(f.END_TOOL_CALL,))
