"""The request a client would send for a case (Chat Completions, or the Responses API): the glue every adapter
that builds a server request shares.

An engine's server is driven the way a client drives it, so an adapter turns the case's `RequestContext`
into the body of `POST /v1/chat/completions` and hands that (or the engine's request type built from it)
to the code the server runs. Engines differ in a few defaults, which the arguments name.
"""

from __future__ import annotations

from typing import Any

from contract.cases.model import NamedChoice, RequestContext, choice_json

USER = {"role": "user", "content": "Please help."}  # the conversation when the case brings no history


def messages(context: RequestContext) -> list[dict[str, Any]]:
    """The case's conversation, or one user turn."""
    return list(context.history) or [USER]


def thinking_flags(context: RequestContext) -> dict[str, Any]:
    """`chat_template_kwargs` turning thinking on or off, under both names templates read; none when the
    request leaves it to the template."""
    if context.thinking is None:
        return {}
    return {"thinking": context.thinking, "enable_thinking": context.thinking}


def parallel_flag(context: RequestContext) -> dict[str, Any]:
    """`parallel_tool_calls` where the case turns it off; OpenAI's default (true) is never sent."""
    return {} if context.parallel_tool_calls else {"parallel_tool_calls": False}


def chat_request(context: RequestContext, *, model: str | None = "graded",
                 choice_without_tools: str | None = None) -> dict[str, Any]:
    """The request body: `model` (left out when None), the conversation, the case's tools (None without),
    its `tool_choice` (`choice_without_tools` when it has no tools), `parallel_tool_calls` where the case turns it
    off, and the thinking flags."""
    request: dict[str, Any] = {} if model is None else {"model": model}
    request.update(
        messages=messages(context),
        tools=[t.openai() for t in context.tools] or None,
        tool_choice=choice_json(context.tool_choice) if context.tools else choice_without_tools,
        chat_template_kwargs=thinking_flags(context),
        **parallel_flag(context),
    )
    return request


def _input_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One chat message as the Responses API's input items: its reasoning, text and calls, or a call's output."""
    if message["role"] == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]}]
    items: list[dict[str, Any]] = []
    if message.get("reasoning_content"):
        items.append({"type": "reasoning", "id": f"rs_{len(items)}", "summary": [],
                      "content": [{"type": "reasoning_text", "text": message["reasoning_content"]}]})
    if message.get("content") or not message.get("tool_calls"):
        items.append({"role": message["role"], "content": message.get("content") or ""})
    items += [{"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
               "arguments": call["function"]["arguments"]} for call in message.get("tool_calls") or ()]
    return items


def responses_request(context: RequestContext, *, model: str | None = "graded") -> dict[str, Any]:
    """The body of `POST /v1/responses` for the same conversation: its messages as input items, the tools flat
    (`{"type": "function", "name", ...}`), a named choice as `{"type": "function", "name"}`, `parallel_tool_calls`
    where the case turns it off, and the thinking flags (as `chat_template_kwargs`, which the engines that serve
    this API take)."""
    choice = context.tool_choice
    request: dict[str, Any] = {} if model is None else {"model": model}
    request.update(
        input=[item for message in messages(context) for item in _input_items(message)],
        tools=[{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
               for t in context.tools],
        tool_choice={"type": "function", "name": choice.name} if isinstance(choice, NamedChoice) else choice,
        chat_template_kwargs=thinking_flags(context),
        **parallel_flag(context),
    )
    return request
