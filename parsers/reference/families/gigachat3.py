"""GigaChat 3: `<|message_sep|>`, the function call role, then one JSON call object ending the output."""

from __future__ import annotations

from fixtures.families import gigachat3 as f

from ..grammars.headed import Headed
from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar

SPEC = JsonBlockSpec(open=f.OPENER, close=f.MESSAGE_SEP, argument_keys=("arguments",))
# the head stops before its last newline: JsonBlock reads whitespace before the object itself, and hands prose
# after the role back with it (the newline keeps the words apart)
GRAMMAR = Grammar(starts=(f.MESSAGE_SEP,), open=lambda marker, context: Headed(f.HEAD.rstrip("\n"), JsonBlock(SPEC)))
