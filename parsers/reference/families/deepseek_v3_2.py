"""DeepSeek V3.2: DSML invokes inside `<｜DSML｜function_calls>`, values read by their `string=` flag, or an
invoke's arguments written as one JSON object for its body."""

from __future__ import annotations

from fixtures.families import deepseek_v3_2 as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

M = f.MARKUP
SPEC = XmlInvokeSpec(ends=(M.close,), invoke=M.invoke, invoke_end=M.invoke_end, parameter=M.parameter,
                     parameter_end=M.parameter_end, string_flag=True, json_body=True)
GRAMMAR = Grammar(starts=(M.open,), open=lambda marker, context: XmlInvoke(SPEC, context), strays=(M.close,))
