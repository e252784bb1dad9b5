"""Step-3: steptml invokes, each wrapped in `<｜tool_call_begin｜>function<｜tool_sep｜>…<｜tool_call_end｜>`; each
wrapper part is skipped on its own, so a call written without `function<｜tool_sep｜>` is a call all the same."""

from __future__ import annotations

from fixtures.families import step3 as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

M = f.MARKUP
SPEC = XmlInvokeSpec(ends=(M.close,), invoke=M.invoke, invoke_end=M.invoke_end, parameter=M.parameter,
                     parameter_end=M.parameter_end, wrappers=(f.CALL_BEGIN, f.CALL_TYPE + f.TOOL_SEP, M.call_close))
GRAMMAR = Grammar(starts=(M.open,), open=lambda marker, context: XmlInvoke(SPEC, context), strays=(M.close,))
