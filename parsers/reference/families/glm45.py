"""GLM-4.5 / GLM-4.6: a name and key/value tag pairs inside `<tool_call>`, typed by the schema."""

from __future__ import annotations

from fixtures._arg_pairs import ArgPairs as Format
from fixtures.families import glm45 as f

from ..grammars.arg_pairs import ArgPairs, ArgPairsSpec
from ..machine import Grammar


def grammar(fmt: Format) -> Grammar:
    """The grammar of a fixture's tag spelling; the whitespace between tags is framing, not grammar."""
    spec = ArgPairsSpec(open=fmt.open, close=fmt.close, key=fmt.key, key_end=fmt.key_end,
                        value=fmt.value, value_end=fmt.value_end)
    return Grammar(starts=(fmt.open,), open=lambda marker, context: ArgPairs(spec, context), strays=(fmt.close,))


GRAMMAR = grammar(f.FORMAT)
