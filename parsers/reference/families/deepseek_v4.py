"""DeepSeek V4: DSML invokes inside `<｜DSML｜tool_calls>` (or a misspelled opener), values read by `string=`."""

from __future__ import annotations

from fixtures.families import deepseek_v4 as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

M = f.MARKUP
CLOSERS = (M.close, *(opener.replace("<", "</", 1) for opener in f.VARIANT_OPENERS))
SPEC = XmlInvokeSpec(ends=CLOSERS, invoke=M.invoke, invoke_end=M.invoke_end, parameter=M.parameter,
                     parameter_end=M.parameter_end, string_flag=True)
GRAMMAR = Grammar(starts=(M.open, *f.VARIANT_OPENERS), open=lambda marker, context: XmlInvoke(SPEC, context),
                  strays=CLOSERS)
