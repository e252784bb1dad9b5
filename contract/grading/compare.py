"""Comparison rules: JSON-value arguments, ids, and text compared word by word.

Text (content, reasoning, raw arguments) is whitespace-tolerant, not whitespace-blind: runs of whitespace may
differ in length and kind and leading or trailing whitespace may differ (a note says so), but a word boundary of
the expected text must not vanish and none may appear inside a word, i.e. both texts split into the same words.
The expected text carries the whitespace the sample has between its kept pieces (`contract.cases.kept`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..cases.expected import ANY_ARGUMENTS, ExpectedCall, ExpectedMessage, RawArguments
from ..cases.model import Message, ToolCall

_WHITESPACE = re.compile(r"\s+")


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality that keeps true distinct from 1 and 1 equal to 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def squeeze(text: str) -> str:
    return _WHITESPACE.sub("", text)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def same_words(expected: str, observed: str) -> bool:
    """The rule above: the same words in the same order, however they are spaced."""
    return expected.split() == observed.split()


def _text(field: str, expected: str, observed: str) -> tuple[list[str], list[str]]:
    if expected.strip() == observed.strip():
        return [], []
    if same_words(expected, observed):
        return [], [f"{field}: differs only in whitespace"]
    if squeeze(expected) == squeeze(observed):
        return [f"{field}: words merged or split: expected {_clip(expected)}, observed {_clip(observed)}"], []
    return [f"{field}: expected {_clip(expected)}, observed {_clip(observed)}"], []


def _clip(text: str, limit: int = 160) -> str:
    shown = text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2 :]
    return repr(shown)


def arguments_match(expected: Any, observed: str) -> str | None:
    """None when the observed argument text matches, else what is wrong."""
    if expected is ANY_ARGUMENTS:
        return None
    if isinstance(expected, RawArguments):
        if same_words(expected.text, observed):
            return None
        merged = " (words merged or split)" if squeeze(expected.text) == squeeze(observed) else ""
        return f"expected raw arguments {_clip(expected.text)}, observed {_clip(observed)}{merged}"
    try:
        value = json.loads(observed)
    except ValueError:
        return f"arguments are not valid JSON: {_clip(observed)}"
    if json_equal(expected, value):
        return None
    return f"arguments differ: expected {_clip(json.dumps(expected, ensure_ascii=False))}, observed {_clip(observed)}"


def _call(i: int, expected: ExpectedCall, observed: ToolCall) -> list[str]:
    problems = []
    if expected.name != observed.name:
        problems.append(f"call {i}: name expected {expected.name!r}, observed {observed.name!r}")
    wrong = arguments_match(expected.arguments, observed.arguments)
    if wrong:
        problems.append(f"call {i}: {wrong}")
    if expected.id is not None and expected.id != observed.id:
        problems.append(f"call {i}: native id expected {expected.id!r}, observed {observed.id!r}")
    return problems


def _ids(observed: Message) -> list[str]:
    ids = [c.id for c in observed.tool_calls]
    problems = [f"call {i}: empty id" for i, v in enumerate(ids) if not v]
    present = [v for v in ids if v]
    if len(set(present)) != len(present):
        problems.append(f"tool-call ids are not unique: {ids}")
    return problems


def matches(expected: ExpectedMessage, observed: Message) -> Verdict:
    """Does the observed message equal this acceptable outcome (finish_reason aside)?"""
    problems: list[str] = []
    notes: list[str] = []
    for field, want, got in (
        ("content", expected.content, observed.content),
        ("reasoning", expected.reasoning, observed.reasoning),
    ):
        p, n = _text(field, want, got)
        problems += p
        notes += n
    if len(expected.tool_calls) != len(observed.tool_calls):
        problems.append(
            f"expected {len(expected.tool_calls)} call(s) {[c.name for c in expected.tool_calls]}, "
            f"observed {len(observed.tool_calls)} {[c.name for c in observed.tool_calls]}"
        )
    else:
        for i, (want_call, got_call) in enumerate(zip(expected.tool_calls, observed.tool_calls, strict=True)):
            problems += _call(i, want_call, got_call)
    problems += _ids(observed)
    return Verdict(not problems, tuple(problems), tuple(notes))


# an id a server minted at random (`call_<hex>`, `chatcmpl-tool-<hex>`): it differs on every run and between a
# stream and its batch, so where ids are kept it is compared as this placeholder (it still fails a native id)
_MINTED_ID = re.compile(r"(?:call_|call-|chatcmpl-tool-)?[0-9a-f]{16,}")
MINTED = "<minted>"


def normalized(message: Message, *, keep_ids: bool) -> dict[str, Any]:
    """A comparable, snapshot-friendly form: stripped text, parsed arguments, ids only if native (a randomly
    minted id as `MINTED`)."""

    def arguments(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return {"raw": squeeze(text)}

    return {
        "content": message.content.strip(),
        "reasoning": message.reasoning.strip(),
        "tool_calls": [
            {"name": c.name, "arguments": arguments(c.arguments), **({"id": MINTED if _MINTED_ID.fullmatch(c.id or "") else c.id} if keep_ids else {})}
            for c in message.tool_calls
        ],
    }
