"""MiMo-V2-Flash / MiMo-V2.5: Qwen3-Coder's XML parameters in `<tool_call>`, values verbatim (unpadded)."""

from __future__ import annotations

from fixtures.families import mimo_xml as f

from ..grammars.xml_function import XmlFunction, XmlFunctionSpec
from ..machine import Grammar

SPEC = XmlFunctionSpec(close=f.END_TOOL_CALL, padding="")
GRAMMAR = Grammar(starts=(f.TOOL_CALL,), open=lambda marker, context: XmlFunction(SPEC, context),
                  strays=(f.END_TOOL_CALL,))
