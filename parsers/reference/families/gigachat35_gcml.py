"""GigaChat 3.5: GCML invokes inside `<｜GCML｜tool_calls>`, values read by their `string=` flag."""

from __future__ import annotations

from fixtures.families import gigachat35_gcml as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

M = f.MARKUP
SPEC = XmlInvokeSpec(ends=(M.close,), invoke=M.invoke, invoke_end=M.invoke_end, parameter=M.parameter,
                     parameter_end=M.parameter_end, string_flag=True)
GRAMMAR = Grammar(starts=(M.open,), open=lambda marker, context: XmlInvoke(SPEC, context), strays=(M.close,))
