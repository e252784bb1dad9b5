"""Mistral v13+: `[TOOL_CALLS]NAME[ARGS]{json}` per call, each call ending where its JSON closes."""

from __future__ import annotations

from fixtures.families import mistral as f

from ..grammars.named_json import NamedJson, NamedJsonSpec
from ..machine import Grammar

SPEC = NamedJsonSpec(separator=f.ARGS)
GRAMMAR = Grammar(starts=(f.TOOL_CALLS,), open=lambda marker, context: NamedJson(SPEC, marker), strays=(f.ARGS,))
