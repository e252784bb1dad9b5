"""Expected results, derived from a case's scenario and its rendering, never written by hand."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .catalog import Call, Case, Content, Reasoning, Rule, Scenario, Truncation
from .rendering import Kind, Rendered, Role


class _AnyArguments:
    """Arguments are not judged (the conservation check still requires the text to survive)."""

    def __repr__(self) -> str:
        return "ANY"


ANY_ARGUMENTS = _AnyArguments()


@dataclass(frozen=True)
class RawArguments:
    """Arguments that are not valid JSON: compared as text, whitespace-insensitively."""

    text: str


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    arguments: Any  # a JSON value (compared as JSON), RawArguments or ANY_ARGUMENTS
    id: str | None = None  # only for native ids

    def to_json(self) -> dict[str, Any]:
        if self.arguments is ANY_ARGUMENTS:
            arguments: Any = "<any>"
        elif isinstance(self.arguments, RawArguments):
            arguments = {"raw": self.arguments.text}
        else:
            arguments = self.arguments
        return {"name": self.name, "arguments": arguments, "id": self.id}


@dataclass(frozen=True)
class ExpectedMessage:
    label: str  # which acceptable outcome this is
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ExpectedCall, ...] = ()
    finish_reason: str = "stop"
    markup_allowed: bool = False  # an outcome that hands raw markup back as content

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            "markup_allowed": self.markup_allowed,
        }


@dataclass(frozen=True)
class Expected:
    """The preferred outcome first, then any other acceptable ones."""

    outcomes: tuple[ExpectedMessage, ...]

    @property
    def preferred(self) -> ExpectedMessage:
        return self.outcomes[0]

    def to_json(self) -> list[dict[str, Any]]:
        return [o.to_json() for o in self.outcomes]


def native_id(call: Call) -> str:
    return f"functions.{call.name}:{call.native_index}"


def _expected_call(case: Case, call: Call) -> ExpectedCall:
    arguments: Any = call.arguments if call.raw_arguments is None else RawArguments(call.raw_arguments)
    call_id = native_id(call) if case.native_ids and call.native_index is not None else None
    return ExpectedCall(call.name, arguments, call_id)


def finish_reason(scenario: Scenario, stop: str) -> str:
    if stop == "length":
        return "length"
    return "tool_calls" if scenario.calls else "stop"


def generation_stop(scenario: Scenario) -> str:
    """How generation ended: cut by max_tokens, or a normal stop (a call inside unclosed reasoning)."""
    if scenario.truncation is Truncation.NONE:
        return "stop"
    if scenario.truncation is Truncation.REASONING_UNCLOSED and scenario.calls:
        return "stop"
    return "length"


def reasoning_kept_in_content(expected: Expected, opener: str, closer: str, *, closed: bool, block: bool) -> Expected:
    """What an "append-think" parser returns: the think block, markers and all, left at the head of content.

    `block`: the output holds a reasoning block, possibly empty (models that cannot stop reasoning);
    `closed`: its closer was written. Every outcome's content starts after the block.
    """

    def kept(outcome: ExpectedMessage) -> ExpectedMessage:
        if not (block or outcome.reasoning):
            return outcome
        head = opener + outcome.reasoning + (closer if closed else "")
        return dataclasses.replace(outcome, content=head + outcome.content, reasoning="", markup_allowed=True)

    return Expected(tuple(kept(o) for o in expected.outcomes))


def _call_text(rendered: Rendered, index: int) -> str:
    """The text of one call, from its first span to its last (its own markup included)."""
    spans = [s for s in rendered.spans if s.call == index]
    if not spans:
        raise ValueError(f"the rendering marks no span of call {index}")
    return rendered.text[min(s.start for s in spans) : max(s.end for s in spans)]


def derive(case: Case, scenario: Scenario, rendered: Rendered, stop: str) -> Expected:
    reasoning = "".join(s.text for s in scenario.segments if isinstance(s, Reasoning))
    content = "".join(s.text for s in scenario.segments if isinstance(s, Content))
    calls = tuple(_expected_call(case, c) for c in scenario.calls)
    finish = finish_reason(scenario, stop)
    exact = ExpectedMessage("exact", content, reasoning, calls, finish)
    # everything after the reasoning block (an empty one too: models that always reason), raw, as content
    after_reasoning = max((s.end for s in rendered.spans if s.role is Role.REASONING_END), default=0)
    whole_text = ExpectedMessage(
        "raw text as content", rendered.text[after_reasoning:], reasoning, (),
        finish_reason(Scenario((), scenario.context), stop), markup_allowed=True,
    )
    if case.rule is Rule.EXACT:
        return Expected((exact,))
    if case.rule is Rule.MALFORMED_ARGUMENTS:
        return Expected((ExpectedMessage("call with raw arguments", content, reasoning, calls, finish), whole_text))
    if case.rule is Rule.UNKNOWN_TOOL:
        return Expected((ExpectedMessage("surfaced as a call", content, reasoning, calls, finish), whole_text))
    if case.rule is Rule.INFERRED_NAME:
        return Expected((ExpectedMessage("call named by its arguments", content, reasoning, calls, finish),
                         whole_text))
    if case.rule is Rule.MALFORMED_NEIGHBOUR:
        *good, _ = calls
        bad = _call_text(rendered, len(calls) - 1)
        return Expected(
            (
                ExpectedMessage("call with raw arguments", content, reasoning, calls, finish),
                ExpectedMessage("bad call's text as content", content + bad, reasoning, tuple(good), finish,
                                markup_allowed=True),
            )
        )
    if case.rule is Rule.TRUNCATED_ARGUMENTS:
        *complete, last = calls
        fragment = rendered.pieces(Kind.ARGUMENTS)[-1]
        as_call = ExpectedCall(last.name, ANY_ARGUMENTS)
        return Expected(
            (
                ExpectedMessage("fragment as a call", content, reasoning, (*complete, as_call), finish),
                ExpectedMessage("fragment as content", content + fragment, reasoning, tuple(complete), finish),
            )
        )
    raise ValueError(f"case {case.id}: unhandled rule {case.rule}")  # pragma: no cover

