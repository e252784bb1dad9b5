"""dots: invokes inside `<dots_function_call>`, raw values typed by the schema (`null` is null)."""

from __future__ import annotations

from fixtures.families import dots_xml as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

M = f.MARKUP
SPEC = XmlInvokeSpec(ends=(M.close,), invoke=M.invoke, invoke_end=M.invoke_end, parameter=M.parameter,
                     parameter_end=M.parameter_end, nulls=f.NULLS)
GRAMMAR = Grammar(starts=(M.open,), open=lambda marker, context: XmlInvoke(SPEC, context), strays=(M.close,))
