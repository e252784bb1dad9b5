"""Kimi K3 XTML: call elements inside the tools channel, values typed by their `type=` attribute; the response
channel's and the message's markers are dropped around the content."""

from __future__ import annotations

from fixtures.families import kimi_k3_xtml as f

from ..grammars.xml_invoke import XmlInvoke, XmlInvokeSpec
from ..machine import Grammar

SPEC = XmlInvokeSpec(ends=(f.END_TOOLS,), invoke=f.CALL, invoke_end=f.END_CALL, parameter=f.ARGUMENT,
                     parameter_end=f.END_ARGUMENT, head_end=f.SEP, type_attribute=True, attribute_entities=True,
                     json_block=f.JSON_BLOCK, json_block_end=f.END_JSON_BLOCK)
GRAMMAR = Grammar(starts=(f.TOOLS,), open=lambda marker, context: XmlInvoke(SPEC, context),
                  strays=(f.END_TOOLS, f.RESPONSE, f.END_RESPONSE, f.END_MESSAGE))
