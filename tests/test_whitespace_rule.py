"""Whitespace-tolerant, not whitespace-blind: how expected text is joined, and how it is compared."""

from __future__ import annotations

import pytest

from contract.cases.catalog import case
from contract.cases.expected import ExpectedCall, ExpectedMessage, RawArguments
from contract.cases.family import Sample
from contract.cases.kept import kept_text, spans_of
from contract.cases.model import Message, ToolCall
from contract.cases.rendering import Kind, Role, TextBuilder
from contract.grading.compare import arguments_match, matches
from fixtures import family

EXPECTED = "And now the time."


@pytest.mark.parametrize("observed, note", [
    ("And now the time.", None),
    ("  And now the time.\n", None),  # leading and trailing whitespace may differ, silently
    ("And  now\nthe\ttime.", "content: differs only in whitespace"),  # runs may differ in length and kind
])
def test_respaced_text_passes(observed: str, note: str | None) -> None:
    verdict = matches(ExpectedMessage("exact", content=EXPECTED), Message(content=observed))
    assert verdict.ok
    assert verdict.notes == ((note,) if note else ())


@pytest.mark.parametrize("observed", ["Andnowthetime.", "And now thetime.", "And no w the time."])
def test_merged_or_split_words_fail(observed: str) -> None:
    verdict = matches(ExpectedMessage("exact", content=EXPECTED), Message(content=observed))
    assert not verdict.ok
    assert verdict.problems == (f"content: words merged or split: expected {EXPECTED!r}, observed {observed!r}",)
    assert verdict.notes == ()


def test_raw_arguments_are_compared_word_by_word() -> None:
    want = RawArguments('{"city": Paris and Lyon}')
    assert arguments_match(want, '{"city":  Paris and\nLyon}') is None
    assert arguments_match(want, '{"city": ParisandLyon}').endswith("(words merged or split)")
    expected = ExpectedMessage("exact", tool_calls=(ExpectedCall("f", want),))
    assert not matches(expected, Message(tool_calls=(ToolCall("f", '{"city": ParisandLyon}', "x"),))).ok
    assert matches(expected, Message(tool_calls=(ToolCall("f", '{"city": Paris and Lyon} ', "x"),))).ok


def _joined(*parts: tuple[str, str] | tuple[str, str, Role]) -> tuple[str, ...]:
    """The acceptable content of a text built from (kind, text[, role]) parts."""
    out = TextBuilder()
    for kind, text, *role in parts:
        if kind == "content":
            out.content(text)
        else:
            out.markup(text, *role)
    rendered = out.build()
    return kept_text(rendered, spans_of(rendered, Kind.CONTENT))


def test_whitespace_at_the_edges_of_removed_markup_is_kept() -> None:
    assert _joined(("content", "call."), ("markup", "\n<tool_call>{}</tool_call>"),
                   ("markup", "\n"), ("content", "Done.")) == ("call.\n\nDone.",)


def test_no_whitespace_around_removed_markup_joins_the_texts() -> None:
    assert _joined(("content", "call."), ("markup", "<|s|><|e|>"), ("content", "Done.")) == ("call.Done.",)


def test_whitespace_only_inside_removed_markup_may_go_or_stay() -> None:
    assert _joined(("content", "call."), ("markup", "<tool_call>\n</tool_call>"),
                   ("content", "Done.")) == ("call.Done.", "call.\nDone.")


def test_a_message_boundary_may_be_joined_with_or_without_a_line_break() -> None:
    assert _joined(("content", "Let me check."), ("markup", "<|end|>", Role.MESSAGE_END),
                   ("markup", "<|start|>"), ("content", "Sunny.")) == ("Let me check.Sunny.", "Let me check.\nSunny.")


def test_every_sample_derives_the_narration_with_the_whitespace_it_has() -> None:
    """On the catalog itself: narration inside a Kimi section has no whitespace around it, DeepSeek V3 writes it on
    its own line; either way the expected content is the narration, words intact."""
    for name in ("kimi_k2", "deepseek_v3", "minimax_m2"):
        sample = family(name).sample(case("tool.content_in_section"))
        assert isinstance(sample, Sample)
        assert [o.content for o in sample.expected.outcomes] == [EXPECTED]
    channels = family("harmony").sample(case("harmony.channels"))
    assert isinstance(channels, Sample)
    assert [o.content for o in channels.expected.outcomes] == ["Let me check.It will be sunny in Paris.",
                                                               "Let me check.\nIt will be sunny in Paris."]
