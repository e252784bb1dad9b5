"""openai-harmony's own entry points on o200k_harmony token ids, mapped to chat fields.

- batch: `encoding.parse_messages_from_completion_tokens(ids, Role.ASSISTANT)`;
- streaming: one `StreamableParser(encoding, Role.ASSISTANT)` per response, `process(id)` for every
  token, `process_eos()` at the end; each token's `last_content_delta` goes where `current_channel` /
  `current_recipient` say.
Messages map to the chat fields as servers map them: analysis -> reasoning; a recipient (commentary
`to=functions.NAME`) -> a call named NAME with the body as arguments; commentary without recipient
and final -> content. Texts of several messages are joined with nothing between them, in batch as
in the stream. The package has no call ids and no finish reason: ids are minted here
(`call_<24 hex>`), and finish_reason is left out (not graded).

Framework-free on purpose: it imports openai-harmony and the project's message types only, so a
standalone reproduction (`nox -s repro`) carries this very code.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from openai_harmony import Role, StreamableParser

from parsers import Delta, Message, ToolCall, ToolCallDelta


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _route(channel: str | None, recipient: str | None) -> str:
    """Which chat field a message body feeds: "call", "reasoning" or "content"."""
    if recipient:
        return "call"
    return "reasoning" if channel == "analysis" else "content"


def _function(recipient: str) -> str:
    return recipient.removeprefix("functions.")


def parse(encoding: Any, token_ids: Sequence[int]) -> Message:
    """A whole response's ids as one message."""
    messages = encoding.parse_messages_from_completion_tokens(list(token_ids), Role.ASSISTANT)
    reasoning, content, calls = "", "", []
    for message in messages:
        body = "".join(getattr(part, "text", "") for part in message.content)
        route = _route(message.channel, message.recipient)
        if route == "call":
            calls.append(ToolCall(_function(message.recipient or ""), body, _call_id()))
        elif route == "reasoning":
            reasoning += body
        else:
            content += body
    return Message(content=content, reasoning=reasoning, tool_calls=tuple(calls))


class Stream:
    """One streamed response: `feed(ids)` as tokens arrive, `finish(ids)` with any last ones."""

    def __init__(self, encoding: Any) -> None:
        self.parser = StreamableParser(encoding, Role.ASSISTANT)
        self.calls = 0  # calls announced so far
        self.in_call = False  # the open message body is a call already announced

    def feed(self, token_ids: Sequence[int]) -> list[Delta]:
        deltas: list[Delta] = []
        for token in token_ids:
            self.parser.process(token)
            deltas += self._read()
        return deltas

    def _read(self) -> list[Delta]:
        """What the last token added: a call's announcement and/or a piece of a message body."""
        channel, recipient = self.parser.current_channel, self.parser.current_recipient
        piece = self.parser.last_content_delta
        out: list[Delta] = []
        if recipient is None:
            self.in_call = False
        elif not self.in_call:  # the first token of a call's body (its header just ended)
            self.in_call, self.calls = True, self.calls + 1
            out.append(Delta(tool_calls=(ToolCallDelta(self.calls - 1, _call_id(), "function", _function(recipient), ""),)))
        if piece:
            route = _route(channel, recipient)
            if route == "call":
                out.append(Delta(tool_calls=(ToolCallDelta(self.calls - 1, arguments=piece),)))
            else:
                out.append(Delta(**{route: piece}))
        return out

    def finish(self, token_ids: Sequence[int] = ()) -> list[Delta]:
        deltas = self.feed(token_ids)
        self.parser.process_eos()
        return deltas
