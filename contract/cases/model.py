"""The project's own small message types: what a parser returns, in one shot and as deltas.

These mirror the OpenAI chat fields (`content`, `reasoning_content`, `tool_calls`) without
depending on any engine's classes, so `contract/` stays importable with no engine installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tool:
    """A function tool declared in the request, with its JSON schema."""

    name: str
    parameters: dict[str, Any]
    description: str = ""

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class NamedChoice:
    """`tool_choice` naming the one function the model must call."""

    name: str

    def openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name}}


ToolChoice = str | NamedChoice  # "auto", "none", "required", or a named function


def choice_json(choice: ToolChoice) -> str | dict[str, Any]:
    """The `tool_choice` value as a client sends it."""
    return choice.openai() if isinstance(choice, NamedChoice) else choice


def forced(choice: ToolChoice) -> bool:
    """Whether the choice obliges the model to call a tool ("required", or a named function)."""
    return choice == "required" or isinstance(choice, NamedChoice)


@dataclass(frozen=True)
class RequestContext:
    """What the request tells the parser besides the model text.

    `prompt_tail` is the end of the rendered prompt (e.g. a prefilled `<think>`); `history` holds the
    earlier messages of the conversation in OpenAI form where a case needs them (native ids, an earlier turn's
    reasoning). `thinking` is the flag the request sends; None sends none (the template's default decides).
    `parallel_tool_calls` False asks for one call at most (OpenAI's default, True, is never sent).
    """

    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice = "auto"
    thinking: bool | None = True
    prompt_tail: str = ""
    history: tuple[dict[str, Any], ...] = ()
    parallel_tool_calls: bool = True

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "tools": [t.openai() for t in self.tools],
            "tool_choice": choice_json(self.tool_choice),
            "thinking": self.thinking,
            "prompt_tail": self.prompt_tail,
            "history": list(self.history),
            **({} if self.parallel_tool_calls else {"parallel_tool_calls": False}),
        }


@dataclass(frozen=True)
class ToolCall:
    """One call as a client sees it: arguments are the JSON text the server returned."""

    name: str
    arguments: str
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Message:
    """The assembled assistant message. Read from another surface than Chat Completions (the Responses API), it also
    says how that surface laid it out (`items`: the output item types, in order) and what that surface's own
    protocol got wrong (`faults`), neither of which the chat fields show."""

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    items: tuple[str, ...] | None = None  # None: Chat Completions, which has no output items
    faults: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            **({} if self.items is None else {"items": list(self.items)}),
        }


@dataclass(frozen=True)
class ToolCallDelta:
    """One OpenAI `choices[0].delta.tool_calls[i]` entry."""

    index: int
    id: str | None = None
    type: str | None = None
    name: str | None = None
    arguments: str | None = None


@dataclass(frozen=True)
class Delta:
    """One streamed OpenAI delta; `finish_reason` rides on the last one. A stream of another surface, read as chat
    deltas, carries that surface's item layout and protocol faults (`Message.items`, `.faults`) on its last delta."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCallDelta, ...] = ()
    finish_reason: str | None = None
    items: tuple[str, ...] | None = None
    faults: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.content or self.reasoning or self.tool_calls or self.finish_reason)


@dataclass(frozen=True)
class Chunk:
    """What one streaming step hands the parser: delta text and, in token tiers, its token ids."""

    text: str
    token_ids: tuple[int, ...] | None = None
