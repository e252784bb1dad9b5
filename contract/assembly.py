"""Assemble streamed deltas into a message the way a client does.

Accumulation is the OpenAI Python SDK's own (`accumulate_delta`, the function behind
`ChatCompletionStreamState`): strings concatenate, tool calls merge by index. So a parser that
repeats an id or a name in later deltas corrupts the assembled call exactly as it would for a
real client.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openai.lib.streaming._deltas import accumulate_delta

from .model import Delta, Message, ToolCall


def delta_dict(delta: Delta) -> dict[str, Any]:
    """The `choices[0].delta` object of a chat.completion.chunk."""
    out: dict[str, Any] = {}
    if delta.content is not None:
        out["content"] = delta.content
    if delta.reasoning is not None:
        out["reasoning_content"] = delta.reasoning
    if delta.tool_calls:
        calls = []
        for call in delta.tool_calls:
            entry: dict[str, Any] = {"index": call.index}
            if call.id is not None:
                entry["id"] = call.id
            if call.type is not None:
                entry["type"] = call.type
            function = {k: v for k, v in (("name", call.name), ("arguments", call.arguments)) if v is not None}
            if function:
                entry["function"] = function
            calls.append(entry)
        out["tool_calls"] = calls
    return out


def assemble(deltas: Iterable[Delta]) -> Message:
    snapshot: dict[object, object] = {"role": "assistant"}
    finish: str | None = None
    for delta in deltas:
        accumulate_delta(snapshot, delta_dict(delta))  # type: ignore[arg-type]
        if delta.finish_reason is not None:
            finish = delta.finish_reason
    calls = []
    for entry in snapshot.get("tool_calls") or []:  # type: ignore[union-attr]
        function = entry.get("function") or {}
        calls.append(ToolCall(function.get("name") or "", function.get("arguments") or "", entry.get("id") or ""))
    return Message(
        content=str(snapshot.get("content") or ""),
        reasoning=str(snapshot.get("reasoning_content") or ""),
        tool_calls=tuple(calls),
        finish_reason=finish,
    )
