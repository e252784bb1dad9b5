"""Expected results, derived from a case's scenario and its rendering, never written by hand."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product
from typing import Any

from .catalog import Call, Case, Rule, Scenario, Truncation
from .kept import joinings, kept_text, spans_of
from .rendering import Kind, Rendered, Role


class _AnyArguments:
    """Arguments are not judged (the conservation check still requires the text to survive)."""

    def __repr__(self) -> str:
        return "ANY"


ANY_ARGUMENTS = _AnyArguments()


@dataclass(frozen=True)
class RawArguments:
    """Arguments that are not valid JSON: compared as text, word by word (`contract.grading.compare`)."""

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
    dropped: tuple[str, ...] = ()  # pieces of the input this outcome leaves out (a call it drops whole)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            "markup_allowed": self.markup_allowed,
            **({"dropped": list(self.dropped)} if self.dropped else {}),
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
    """Kimi K2's native id scheme, the default; a family with another scheme gives its own (`Family.native_id`)."""
    return f"functions.{call.name}:{call.native_index}"


NativeId = Callable[[Call], str]


def _expected_call(case: Case, call: Call, make_id: NativeId = native_id) -> ExpectedCall:
    arguments: Any = call.arguments if call.raw_arguments is None else RawArguments(call.raw_arguments)
    call_id = make_id(call) if case.native_ids and call.native_index is not None else None
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


def reasoning_kept_in_content(expected: Expected, rendered: Rendered, opener: str, *, closed: bool,
                              block: bool) -> Expected:
    """What an "append-think" parser returns: the think block, markers and all, left at the head of content.

    `block`: the output holds a reasoning block, possibly empty (models that cannot stop reasoning);
    `closed`: its closer was written. The block is kept as the sample wrote it (the prompt's opener before it where
    the prompt prefilled one), then the whitespace the sample has before the content (`contract.cases.kept`).
    """
    closers = [s for s in rendered.spans if s.role is Role.REASONING_END]
    thoughts = [s for s in rendered.spans if s.kind is Kind.REASONING]
    end = closers[0].end if closed and closers else max((s.end for s in thoughts), default=0)
    start = rendered.text.rfind(opener, 0, thoughts[0].start if thoughts else end)
    head = rendered.text[start:end] if start != -1 else opener + rendered.text[:end]
    after = next((s.start for s in rendered.spans if s.kind is not Kind.MARKUP and s.start >= end), len(rendered.text))
    joiner = joinings(rendered, end, after)[0]

    def kept(outcome: ExpectedMessage) -> ExpectedMessage:
        if not (block or outcome.reasoning):
            return outcome
        content = head + (joiner if outcome.content else "") + outcome.content
        return dataclasses.replace(outcome, content=content, reasoning="", markup_allowed=True)

    return Expected(tuple(kept(o) for o in expected.outcomes))


def _call_range(rendered: Rendered, index: int) -> tuple[int, int]:
    """Where one call is in the text, from its first span to its last (its own markup included)."""
    spans = [s for s in rendered.spans if s.call == index]
    if not spans:
        raise ValueError(f"the rendering marks no span of call {index}")
    return min(s.start for s in spans), max(s.end for s in spans)


def derive(case: Case, scenario: Scenario, rendered: Rendered, stop: str, make_id: NativeId = native_id) -> Expected:
    """Every acceptable outcome, the preferred first. Content and reasoning are the sample's own pieces, joined
    with the whitespace the sample has between them (`contract.cases.kept`); where that allows two joinings, each
    outcome comes in both."""
    reasonings = kept_text(rendered, spans_of(rendered, Kind.REASONING))
    content = spans_of(rendered, Kind.CONTENT)
    calls = tuple(_expected_call(case, c, make_id) for c in scenario.calls)
    finish = finish_reason(scenario, stop)

    def outcome(label: str, calls: tuple[ExpectedCall, ...], *, also: tuple[int, int] | None = None,
                markup_allowed: bool = False, dropped: tuple[str, ...] = ()) -> tuple[ExpectedMessage, ...]:
        """The outcome with the sample's content (and `also`, a stretch of text kept as content with it)."""
        kept = kept_text(rendered, sorted([*content, also]) if also else content)
        return tuple(ExpectedMessage(label if n == 0 else f"{label} (joined with whitespace at removed markup)",
                                     text, reasoning, calls, finish, markup_allowed, dropped)
                     for n, (text, reasoning) in enumerate(product(kept, reasonings)))

    # everything after the reasoning block (an empty one too: models that always reason), raw, as content
    after_reasoning = max((s.end for s in rendered.spans if s.role is Role.REASONING_END), default=0)
    whole_text = ExpectedMessage(
        "raw text as content", rendered.text[after_reasoning:], reasonings[0], (),
        finish_reason(Scenario((), scenario.context), stop), markup_allowed=True,
    )
    if case.rule is Rule.EXACT:
        return Expected(outcome("exact", calls))
    if case.rule is Rule.NO_TOOL_CHOSEN:
        return Expected((dataclasses.replace(whole_text, label="no call: the text as content"),))
    if case.rule is Rule.ONE_CALL_ASKED:
        later = tuple(rendered.text[s.start : s.end] for s in rendered.spans
                      if s.kind is Kind.ARGUMENTS and s.call is not None and s.call > 0)
        return Expected((*outcome("the first call alone", calls[:1], dropped=later),
                         *outcome("every call, as the model wrote them", calls)))
    if case.rule is Rule.FORCED_FUNCTION:
        called = outcome("the call", calls)
        return Expected((*called, *(dataclasses.replace(o, label=f"{o.label}, finished as OpenAI answers a named "
                                                        "choice", finish_reason="stop") for o in called)))
    if case.rule is Rule.TRUNCATED_NAME:
        return Expected(outcome("the complete calls; the cut one dropped", calls[:-1]))
    if case.rule is Rule.MALFORMED_ARGUMENTS:
        return Expected((*outcome("call with raw arguments", calls), whole_text))
    if case.rule is Rule.UNKNOWN_TOOL:
        return Expected((*outcome("surfaced as a call", calls), whole_text))
    if case.rule is Rule.INFERRED_NAME:
        return Expected((*outcome("call named by its arguments", calls), whole_text))
    if case.rule is Rule.MALFORMED_NEIGHBOUR:
        *good, _ = calls
        return Expected((*outcome("call with raw arguments", calls),
                         *outcome("bad call's text as content", tuple(good),
                                  also=_call_range(rendered, len(calls) - 1), markup_allowed=True)))
    if case.rule is Rule.TRUNCATED_ARGUMENTS:
        *complete, last = calls
        fragment = spans_of(rendered, Kind.ARGUMENTS)[-1]
        return Expected((*outcome("fragment as a call", (*complete, ExpectedCall(last.name, ANY_ARGUMENTS))),
                         *outcome("fragment as content", tuple(complete), also=fragment)))
    raise ValueError(f"case {case.id}: unhandled rule {case.rule}")  # pragma: no cover

