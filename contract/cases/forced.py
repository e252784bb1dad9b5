"""What a model writes under a forced `tool_choice`, where the engine constrains its output.

Under `"required"` or a named function most servers constrain decoding, and the constraint decides the text:
the family's own markup (a native structural tag, or no constraint at all), or a generic JSON shape the engine's
schema asks for. A parser is graded on the text its engine would make the model write; the case's expected
message stays the same, since every shape carries the same calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum
from typing import Any

from .catalog import Call
from .model import NamedChoice, ToolChoice
from .rendering import Rendered, Role, TextBuilder


class ForcedText(Enum):
    """The shape of the text a forced choice makes the model write (after any reasoning)."""

    NATIVE = ""  # the family's own markup, as under "auto"
    JSON_CALLS = "json-calls"  # `[{"name": N, "parameters": {...}}]`: a JSON schema over the calls
    JSON_CALLS_ARGUMENTS = "json-calls-arguments"  # the same array, keyed `arguments`
    JSON_ARGUMENTS = "json-arguments"  # the named function's arguments object alone

    @property
    def variant(self) -> str:
        """How the results' samples table names a sample written in this shape ("" for the native one)."""
        return self.value


class UnwritableText(ValueError):
    """The engine's constraint admits no text the matrix can derive for the case's calls (a structural tag whose
    layout is not the family's and whose content is not JSON arguments): the cell is an error, and has no
    standalone repro, since the text the model would write is not known."""


@dataclass(frozen=True)
class TaggedCalls:
    """A structural tag's literal text around each call's arguments (SGLang's legacy tags): per function name, what
    the tag writes before the arguments (the name within it) and after them. The model writes one tagged call after
    another, the arguments as JSON."""

    tags: tuple[tuple[str, str, str], ...]  # (function name, begin, end)

    variant = "tagged"

    def around(self, name: str) -> tuple[str, str]:
        for tagged, begin, end in self.tags:
            if tagged == name:
                return begin, end
        raise ValueError(f"the structural tag has no call to {name!r}")


Written = ForcedText | TaggedCalls  # what an engine's constraint has the model write


def shapes_for(choice: ToolChoice) -> tuple[ForcedText, ...]:
    """Every shape an engine's constraint may give the text under this choice (the draws stored for its cases)."""
    if isinstance(choice, NamedChoice):
        return (ForcedText.NATIVE, ForcedText.JSON_ARGUMENTS, ForcedText.JSON_CALLS_ARGUMENTS)
    if choice == "required":
        return (ForcedText.NATIVE, ForcedText.JSON_CALLS, ForcedText.JSON_CALLS_ARGUMENTS)
    return (ForcedText.NATIVE,)


def reasoning_end(rendered: Rendered) -> int:
    """Where the text after the reasoning block begins (0 without one): what a constraint held back while the model
    reasons applies from there on."""
    return max((s.end for s in rendered.spans if s.role is Role.REASONING_END), default=0)


def calls_end(rendered: Rendered) -> int:
    """Where the markup after the last call or section ends begins (an end-of-turn marker): the end of the text
    where there is none."""
    return max((s.end for s in rendered.spans if s.role in (Role.SECTION_END, Role.CALL_END)), default=len(rendered.text))


def forced_rendering(native: Rendered, calls: tuple[Call, ...], shape: Written) -> Rendered:
    """The native rendering with its calls rewritten in `shape`: what precedes the calls (a reasoning block the
    constraint does not reach) is kept, the calls are written as the shape's JSON (or tag)."""
    if shape is ForcedText.NATIVE:
        return native
    head = reasoning_end(native)
    out = TextBuilder()
    if isinstance(shape, TaggedCalls):
        for index, call in enumerate(calls):
            begin, end = shape.around(call.name)
            out.markup(begin, call=index)
            out.arguments(_arguments(call), index)
            out.markup(end, Role.CALL_END, index)
    elif shape is ForcedText.JSON_ARGUMENTS:
        if len(calls) != 1:
            raise ValueError(f"a named choice writes one arguments object, not {len(calls)} calls")
        out.arguments(_arguments(calls[0]), 0)
    else:
        key = "parameters" if shape is ForcedText.JSON_CALLS else "arguments"
        out.markup("[")
        for index, call in enumerate(calls):
            out.markup(", " if index else "")
            out.markup('{"name": "', call=index)
            out.call_name(json.dumps(call.name, ensure_ascii=False)[1:-1], index)
            out.markup(f'", "{key}": ', call=index)
            out.arguments(_arguments(call), index)
            out.markup("}", Role.CALL_END, index)
        out.markup("]", Role.SECTION_END)
    written = out.build()
    kept = tuple(s for s in native.spans if s.end <= head)
    return Rendered(native.text[:head] + written.text, (*kept, *(s.shifted(head) for s in written.spans)))


def _arguments(call: Call) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments, ensure_ascii=False)



def shape_of_schema(schema: Mapping[str, Any] | str) -> ForcedText:
    """The shape a JSON-schema constraint (an engine's, as JSON or its text) has the model write: an array of
    `{"name", "parameters"|"arguments"}` objects, or one arguments object."""
    value = json.loads(schema) if isinstance(schema, str) else schema
    if value.get("type") == "object":
        return ForcedText.JSON_ARGUMENTS
    items = value.get("items", {}) if value.get("type") == "array" else {}
    item = items.get("anyOf", [items])[0] if isinstance(items, Mapping) else {}
    keys = set(item.get("properties", {})) if isinstance(item, Mapping) else set()
    for key, shape in (("parameters", ForcedText.JSON_CALLS), ("arguments", ForcedText.JSON_CALLS_ARGUMENTS)):
        if keys == {"name", key}:
            return shape
    raise ValueError(f"a JSON schema of no known call shape: {json.dumps(value)[:200]}")


def tagged_calls(tag: Any, names: Sequence[str], *, near: str = "", missing_ok: bool = False) -> TaggedCalls | None:
    """The call tags of a structural tag in xgrammar's JSON form: each `{"type": "tag", "begin", "content": a JSON
    schema, "end"}` whose begin names one of the functions (by whole word), as `TaggedCalls`; where a function has
    several, the one whose begin is most like `near` (the family's own text: the layout the model was trained on).
    `missing_ok`: None where a function has none, else an error."""
    found: dict[str, list[tuple[str, str, str]]] = {name: [] for name in names}

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            content, begin = value.get("content"), value.get("begin")
            if (value.get("type") == "tag" and isinstance(content, Mapping) and content.get("type") == "json_schema"
                    and isinstance(begin, str)):
                ends = value.get("end", "")
                ends = ends if isinstance(ends, list) else [ends]
                end = next((e for e in ends if e and e in near), ends[0])  # the family's own where it is one
                for name in names:
                    if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", begin):
                        found[name].append((name, begin, end))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(tag)
    missing = [name for name, tags in found.items() if not tags]
    if missing and missing_ok:
        return None
    if missing:
        raise ValueError(f"the structural tag has no JSON-argument tag naming {missing}")
    closest = {name: max(tags, key=lambda t: SequenceMatcher(None, t[1], near).ratio()) for name, tags in found.items()}
    return TaggedCalls(tuple(closest[name] for name in names))
