"""Structural tags in xgrammar's JSON form, as engines that constrain with xgrammar build them for a forced
`tool_choice`: whether a tag admits a text, and what a model writes under it.

Imported by the adapters of engines that depend on xgrammar themselves (vLLM, SGLang, lmdeploy's pins), so that
the text graded under a forced choice is one the engine's own constraint accepts, checked, never assumed.
"""

from __future__ import annotations

import json
from typing import Any

from parsers import ForcedText, Sample, UnwritableText, Written, calls_end, reasoning_end, tagged_calls


def admits(tag: Any, text: str) -> bool:
    """Whether the structural tag (xgrammar's JSON form, or its text) accepts the text whole, at the string level
    (xgrammar is imported here: only the engines that constrain with it install it)."""
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    grammar = xgrammar.Grammar.from_structural_tag(tag if isinstance(tag, str) else json.dumps(tag))
    return bool(_is_grammar_accept_string(grammar, text))


def written_under(tag: Any, sample: Sample, engine: str, *, after_reasoning: bool = False) -> Written:
    """What the model writes under the tag: the family's markup where the tag admits it (up to an end-of-turn marker
    after the calls, on which generation stops once the grammar is done), else the tag's own literal
    around each call's JSON arguments; an error (naming the engine) where it admits neither. `after_reasoning`: the
    tag applies from the end of the reasoning block on (a grammar the engine holds back while the model reasons)."""
    start = reasoning_end(sample.rendered) if after_reasoning else 0
    if admits(tag, sample.text[start:]) or admits(tag, sample.text[start:calls_end(sample.rendered)]):
        return ForcedText.NATIVE
    value = json.loads(tag) if isinstance(tag, str) else tag
    tagged = tagged_calls(value, [call.name for call in sample.scenario.calls], near=sample.text[start:],
                          missing_ok=True)
    if tagged is None or not admits(tag, sample.written_as(tagged).text[start:]):
        raise UnwritableText(f"{engine}'s structural tag for tool_choice {sample.context.tool_choice!r} admits neither the "
                         f"family's own calls {sample.text[start:]!r} nor the calls in a literal of the tag's own: "
                         f"{json.dumps(value)[:800]}")
    return tagged

