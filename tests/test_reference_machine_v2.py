"""The reference machine's catalog-v2 rules, on the machine alone (no engine, no family codec):
stray markers dropped from content, call markup quoted inside reasoning that later closes, and an
opener the output writes again after the prompt prefilled it."""

from __future__ import annotations

import pytest

from contract.cases.family import ReasoningStyle
from contract.cases.model import Delta, Message, RequestContext
from contract.grading.assembly import assemble
from parsers.reference.calls import PartialCall, not_a_call
from parsers.reference.machine import Grammar, Machine

OPEN, CLOSE = "<call>", "</call>"
THINK, END_THINK = "<think>", "</think>"


class Codec:
    """A minimal section codec: `NAME JSON` up to the end marker; a lower-case name or no call."""

    def __init__(self) -> None:
        self.calls: list[PartialCall] = []
        self.stray = ""
        self.body = ""

    def feed(self, text: str) -> str | None:
        self.body += text
        if not_a_call(self.body, "abcdefghijklmnopqrstuvwxyz_"):
            return self.body  # a false start: the text after the marker is read on as content
        if CLOSE not in self.body:
            return None
        body, rest = self.body.split(CLOSE, 1)
        self._call(body)
        return rest

    def finish(self) -> None:
        self._call(self.body)

    def _call(self, body: str) -> None:
        name, _, arguments = body.strip().partition(" ")
        self.calls.append(PartialCall(name=name, arguments=arguments))


GRAMMAR = Grammar(starts=(OPEN,), open=lambda marker, context: Codec(), strays=(CLOSE,))
REASONING = ReasoningStyle(THINK, END_THINK, implicit_end=(OPEN,))
PREFILLED = RequestContext(prompt_tail=THINK)
PLAIN = RequestContext()


def _machine(context: RequestContext = PLAIN) -> Machine:
    return Machine(GRAMMAR, REASONING, context)


def batch(text: str, context: RequestContext = PLAIN) -> Message:
    machine = _machine(context)
    return assemble([*machine.feed(text), *machine.finish("stop")])


def by_chars(text: str, context: RequestContext = PLAIN) -> tuple[Message, list[Message]]:
    """The final message, and the message assembled so far after each character."""
    machine = _machine(context)
    deltas: list[Delta] = []
    so_far = []
    for char in text:
        deltas += machine.feed(char)
        so_far.append(assemble(deltas))
    deltas += machine.finish("stop")
    return assemble(deltas), so_far


def _calls(message: Message) -> list[tuple[str, str]]:
    return [(c.name, c.arguments) for c in message.tool_calls]


# (1) Grammar.strays


@pytest.mark.parametrize("feed", [batch, lambda t: by_chars(t)[0]], ids=["batch", "chars"])
def test_stray_marker_in_content_is_dropped(feed) -> None:
    message = feed("Sure." + CLOSE + " No tool needed.")
    assert message.content == "Sure. No tool needed."
    assert message.tool_calls == ()
    assert message.finish_reason == "stop"


def test_possible_stray_prefix_is_held_then_dropped() -> None:
    _, so_far = by_chars("Sure.</cal" + "l> done")
    shown = [m.content for m in so_far]
    assert shown[len("Sure.</cal") - 1] == "Sure."  # "</cal" could still be the stray: withheld
    assert shown[-1] == "Sure. done"
    assert all("<" not in s for s in shown)


def test_possible_stray_prefix_that_is_no_marker_is_released() -> None:
    assert batch("a </ca> b").content == "a </ca> b"
    assert by_chars("a </ca> b")[0].content == "a </ca> b"


def test_stray_inside_reasoning_stays_reasoning_text() -> None:
    message = batch(THINK + "quote " + CLOSE + " here" + END_THINK + "answer")
    assert message.reasoning == "quote " + CLOSE + " here"
    assert message.content == "answer"


@pytest.mark.parametrize("feed", [batch, lambda t: by_chars(t)[0]], ids=["batch", "chars"])
def test_false_start_text_is_content_and_a_later_call_still_counts(feed) -> None:
    message = feed("Let me think." + OPEN + " No tool, but " + OPEN + 'noop {}' + CLOSE)
    assert message.content == "Let me think. No tool, but "
    assert _calls(message) == [("noop", "{}")]


# (2) the quoted-call rule

QUOTED = THINK + "The format is " + OPEN + 'get_time {"tz": "UTC"}' + CLOSE + " so now I know." + END_THINK
REAL = OPEN + 'get_weather {"city": "Paris"}' + CLOSE


@pytest.mark.parametrize("feed", [batch, lambda t: by_chars(t)[0]], ids=["batch", "chars"])
def test_call_quoted_in_reasoning_that_closes_is_reasoning_text(feed) -> None:
    message = feed(QUOTED + REAL)
    assert message.reasoning == 'The format is <call>get_time {"tz": "UTC"}</call> so now I know.'
    assert message.content == ""
    assert _calls(message) == [("get_weather", '{"city": "Paris"}')]
    assert message.finish_reason == "tool_calls"


def test_quoted_call_is_held_until_the_closer() -> None:
    _, so_far = by_chars(QUOTED + REAL)
    at_start = len(THINK + "The format is ")
    held = so_far[at_start : len(QUOTED) - len(END_THINK)]
    assert all(m.reasoning == "The format is " and not m.tool_calls for m in held)
    assert so_far[len(QUOTED) - 1].reasoning.endswith("so now I know.")


@pytest.mark.parametrize("prefilled", [False, True], ids=["opened", "prefilled"])
@pytest.mark.parametrize("feed", [batch, lambda t, c: by_chars(t, c)[0]], ids=["batch", "chars"])
def test_call_inside_unclosed_reasoning_is_a_call(feed, prefilled: bool) -> None:
    text = ("" if prefilled else THINK) + "I need the forecast. " + REAL
    message = feed(text, PREFILLED if prefilled else PLAIN)
    assert message.reasoning == "I need the forecast. "
    assert message.content == ""
    assert _calls(message) == [("get_weather", '{"city": "Paris"}')]
    assert message.finish_reason == "tool_calls"


def test_unclosed_call_inside_unclosed_reasoning_is_completed_at_the_end() -> None:
    message = batch(THINK + "r " + OPEN + 'get_weather {"city": "Paris"}')
    assert message.reasoning == "r "
    assert _calls(message) == [("get_weather", '{"city": "Paris"}')]


def test_call_inside_unclosed_reasoning_is_announced_only_at_the_end() -> None:
    _, so_far = by_chars(THINK + "r " + REAL)
    assert all(not m.tool_calls for m in so_far)
    assert so_far[-1].reasoning == "r "


# (3) reasoning.reopened, and (4) leading whitespace


@pytest.mark.parametrize("feed", [batch, lambda t, c: by_chars(t, c)[0]], ids=["batch", "chars"])
@pytest.mark.parametrize("lead", ["", "\n  "], ids=["at-0", "after-whitespace"])
def test_opener_written_again_after_a_prefilled_one_is_dropped(feed, lead: str) -> None:
    message = feed(lead + THINK + "thought" + END_THINK + "answer", PREFILLED)
    assert message.reasoning == "thought"
    assert message.content == "answer"


def test_prefilled_reasoning_without_a_second_opener_is_kept_whole() -> None:
    assert batch("<b>thought" + END_THINK + "answer", PREFILLED).reasoning == "<b>thought"
    assert by_chars("<thin>k" + END_THINK + "answer", PREFILLED)[0].reasoning == "<thin>k"


def test_only_a_leading_opener_is_dropped() -> None:
    message = batch("thought " + THINK + " more" + END_THINK + "answer", PREFILLED)
    assert message.reasoning == "thought " + THINK + " more"


@pytest.mark.parametrize("feed", [batch, lambda t: by_chars(t)[0]], ids=["batch", "chars"])
def test_whitespace_before_the_opener_or_a_call(feed) -> None:
    message = feed("\n  " + THINK + "thought" + END_THINK + "answer")
    assert (message.reasoning, message.content) == ("thought", "answer")
    message = feed("\n  " + REAL)
    assert message.content.strip() == ""
    assert _calls(message) == [("get_weather", '{"city": "Paris"}')]
