"""Assemble streamed deltas into a message the way a client does.

Accumulation is the OpenAI Python SDK's own (`accumulate_delta`, the function behind
`ChatCompletionStreamState`): strings concatenate, tool calls merge by index. So a parser that
repeats an id or a name in later deltas corrupts the assembled call exactly as it would for a
real client. The SDK treats each top-level key on its own and concatenates string values, so content
and reasoning are concatenated here directly; tool calls go through `accumulate_delta`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Imported with the grader, never inside a parser call: importing the SDK costs a third of a second of CPU,
# which, paid during a parser's first call, would be charged to that parser and count against its hang bound.
from openai.lib.streaming._deltas import accumulate_delta

from ..cases.model import Delta, Message, ToolCall


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


def _appends(calls: list[dict[str, Any]], snapshot: dict[object, object]) -> bool:
    """One entry carrying argument text alone, for a call the snapshot already holds: consecutive ones
    concatenate, exactly as the SDK merges them one by one (an index it does not hold yet, it inserts)."""
    return (len(calls) == 1 and calls[0].keys() == {"index", "function"} and calls[0]["function"].keys() == {"arguments"}
            and calls[0]["index"] < len(snapshot.get("tool_calls") or ()))  # type: ignore[arg-type]


def _flush(snapshot: dict[object, object], pending: list[dict[str, Any]]) -> None:
    """Merge the argument text appended to one call as one entry (what the SDK would have built), and empty
    `pending`."""
    if pending:
        arguments = "".join(entry["function"]["arguments"] for entry in pending)
        entry = {"index": pending[0]["index"], "function": {"arguments": arguments}}
        accumulate_delta(snapshot, {"tool_calls": [entry]})  # type: ignore[arg-type]
        pending.clear()


def assemble(deltas: Iterable[Delta]) -> Message:
    snapshot: dict[object, object] = {"role": "assistant"}
    content: list[str] = []
    reasoning: list[str] = []
    finish: str | None = None
    pending: list[dict[str, Any]] = []  # argument text appended to one call, delta after delta, not yet merged
    for delta in deltas:
        if delta.content is not None:
            content.append(delta.content)
        if delta.reasoning is not None:
            reasoning.append(delta.reasoning)
        if delta.tool_calls:
            calls = delta_dict(delta)["tool_calls"]
            if not _appends(calls, snapshot):
                _flush(snapshot, pending)
                accumulate_delta(snapshot, {"tool_calls": calls})  # type: ignore[arg-type]
            elif pending and pending[0]["index"] == calls[0]["index"]:
                pending.append(calls[0])
            else:
                _flush(snapshot, pending)
                pending.append(calls[0])
        if delta.finish_reason is not None:
            finish = delta.finish_reason
    _flush(snapshot, pending)
    calls = []
    for entry in snapshot.get("tool_calls") or []:  # type: ignore[union-attr]
        function = entry.get("function") or {}
        calls.append(ToolCall(function.get("name") or "", function.get("arguments") or "", entry.get("id") or ""))
    return Message(
        content="".join(content),
        reasoning="".join(reasoning),
        tool_calls=tuple(calls),
        finish_reason=finish,
    )
