"""MiniCPM5: bare `<function name="N">` calls with `<param name="K">` values, CDATA read verbatim."""

from __future__ import annotations

from fixtures.families import minicpm5_xml as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

SPEC = XmlInvokeSpec(ends=(), invoke=f.FUNCTION, invoke_end=f.END_FUNCTION, parameter=f.PARAM,
                     parameter_end=f.END_PARAM, cdata=True)
# no section around the calls: each `<function name="` opens a one-call section of its own
GRAMMAR = Grammar(starts=(f.FUNCTION,), open=lambda marker, context: XmlInvoke(SPEC, context, bare=True),
                  strays=(f.END_FUNCTION,))
