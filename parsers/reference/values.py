"""Typing raw text values by the declared JSON schema (XML-parameter formats).

A parameter's kind is its schema's type, or, for a union (a `type` list, `anyOf`, `oneOf`, as Pydantic
writes Optional and union fields), the member types in declared order joined by `|`
(`"integer|null"`). A union value is typed by the first non-string member that accepts the text,
else it is a string; a value declared plainly `string` stays the text it is, even `null` or `{…}`. Type names
outside JSON Schema that tool definitions use (`int`, `float`, `double`, `bool`, `dict`, `list`, `str`) are read as
the JSON type they name.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from parsers import RequestContext

_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
# type names outside JSON Schema that tool definitions use (Python's, and double), read as the JSON type they mean
_ALIASES = {"int": "integer", "float": "number", "double": "number", "bool": "boolean", "dict": "object",
            "list": "array", "str": "string"}


def _members(schema: Any, depth: int = 0) -> list[str]:
    """The JSON types a schema admits, in declared order (unions flattened)."""
    if not isinstance(schema, dict) or depth > 8:
        return []
    kind = schema.get("type")
    if isinstance(kind, str):
        return [_ALIASES.get(kind, kind)]
    if isinstance(kind, list):
        return [_ALIASES.get(k, k) for k in kind if isinstance(k, str)]
    out: list[str] = []
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            out += [k for k in _members(option, depth + 1) if k not in out]
    return out


def declared_type(context: RequestContext, function: str, parameter: str) -> str | None:
    """The parameter's schema type, a union's members joined by `|`; None when undeclared or untyped."""
    tool = context.tool(function)
    if tool is None:
        return None
    schema = (tool.parameters.get("properties") or {}).get(parameter)
    members = [k for k in _members(schema) if k in _TYPES]
    return "|".join(dict.fromkeys(members)) or None


def streams_as_string(kind: str | None) -> bool:
    """Whether a value of this kind is a string unless it is `null`: undeclared, `string`, `string|null`."""
    return kind is None or set(kind.split("|")) - {"null"} == {"string"}


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def _accepts(kind: str, raw: str) -> tuple[bool, Any]:
    """Whether a (non-string) JSON type accepts the raw text, and the typed value."""
    text = raw.strip()
    try:
        if kind == "null":
            return text.lower() == "null", None
        if kind == "integer":
            return True, int(text)
        if kind == "number":
            number = float(text)
            if number != number or number in (float("inf"), float("-inf")):
                return False, None
            return True, int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "boolean":
            return text.lower() in ("true", "false"), text.lower() == "true"
        if kind in ("object", "array"):
            value = _parsed(text)
            expected = dict if kind == "object" else list
            return isinstance(value, expected), value
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return False, None
    return False, None


def convert(raw: str, kind: str | None) -> Any:
    """Raw text -> JSON value by the declared kind.

    `string` keeps the text; a union takes the first non-string member that accepts it, else the
    text; an undeclared value reads `null` as null and stays text otherwise; a single non-string
    type that does not accept the text reads `null` as null, else any JSON literal, else the text."""
    if kind == "string":
        return raw
    if kind is None:
        return None if raw.strip().lower() == "null" else raw
    members = kind.split("|")
    for member in members:
        if member == "string":
            continue
        ok, value = _accepts(member, raw)
        if ok:
            return value
    if len(members) > 1:
        return raw
    if raw.strip().lower() == "null":
        return None
    if kind in ("integer", "number", "boolean"):
        return raw
    try:
        return _parsed(raw.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return raw
