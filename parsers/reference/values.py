"""Typing raw text values by the declared JSON schema (XML-parameter formats)."""

from __future__ import annotations

import ast
import json
from typing import Any

from contract.model import RequestContext


def declared_type(context: RequestContext, function: str, parameter: str) -> str | None:
    """The parameter's schema type (first non-null one of a list); None when undeclared."""
    tool = context.tool(function)
    if tool is None:
        return None
    schema = (tool.parameters.get("properties") or {}).get(parameter)
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def convert(raw: str, kind: str | None) -> Any:
    """Raw text -> JSON value: `null` is null; strings stay strings; the rest parse or stay text."""
    if raw.strip().lower() == "null":
        return None
    if kind in (None, "string"):
        return raw
    text = raw.strip()
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "boolean":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            return raw
        try:
            return json.loads(text)
        except ValueError:
            return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return raw
