"""Qwen3-Coder / Qwen3.5: XML parameters inside `<tool_call>`, typed by the schema; bare `<function=…>` blocks too."""

from __future__ import annotations

from fixtures.families import qwen3_coder as f

from ..grammars.xml_function import XmlFunction, XmlFunctionSpec
from ..machine import Grammar

SPEC = XmlFunctionSpec(close=f.END_TOOL_CALL)
# Qwen3-Coder and Qwen3.5 also write `<function=…>` blocks without `<tool_call>`: the function marker opens a
# one-call section of its own
GRAMMAR = Grammar(starts=(f.TOOL_CALL, f.FUNCTION),
                  open=lambda marker, context: XmlFunction(SPEC, context, bare=marker == f.FUNCTION),
                  strays=(f.END_TOOL_CALL,))
