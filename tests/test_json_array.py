"""The JSON-list codec beyond the catalog: text that only looks like a call list goes back to content."""

from __future__ import annotations

import pytest

from contract.cases.catalog import DEFAULT_TOOLS
from contract.cases.model import Chunk, Message, RequestContext
from contract.grading.assembly import assemble
from fixtures import family
from parsers.reference import load

ENGINE = load()
CONTEXT = RequestContext(tools=DEFAULT_TOOLS, thinking=False)


def _parsed(name: str, text: str) -> tuple[Message, Message]:
    """(streamed one character at a time, one shot)."""
    parser = ENGINE.factories[name](family(name))
    session = parser.open_stream(CONTEXT)
    deltas = [d for char in text for d in session.feed(Chunk(char))]
    streamed = assemble([*deltas, *session.finish("stop")])
    return streamed, parser.parse(text, None, CONTEXT, "stop")


def _calls(message: Message) -> list[tuple[str, str]]:
    return [(c.name, c.arguments) for c in message.tool_calls]


@pytest.mark.parametrize(
    ("name", "text", "content"),
    [
        ("phi4_mini", "I used functools to cache it; functools is great", None),
        ("phi4_mini", "ends with functools", None),
        ("llama3_json", "{1, 2} is a set", None),
        ("llama3_json", '{"answer": 42} is JSON, not a call', None),
        # xLAM's list opens with its own `[`: an answer that starts with a link, a list or JSON data is text
        ("xlam_json", "[1, 2] are the numbers", None),
        ("xlam_json", "[Docs](https://example.com) explain it", None),
        ("xlam_json", '[{"city": "Paris", "temp": 21}] is the data', None),
        # a control marker followed by prose is a false start: the marker is dropped (tool.false_start), while
        # Phi-4-mini's `functools` is a plain word and stays
        ("granite", "<tool_call> is how Granite 3.1 starts a call", " is how Granite 3.1 starts a call"),
    ],
)
def test_no_list_after_the_opener_is_content(name: str, text: str, content: str | None) -> None:
    for message in _parsed(name, text):
        assert (message.content, message.tool_calls) == (text if content is None else content, ())


def test_key_order_is_free_and_nested_keys_are_arguments() -> None:
    text = '{"parameters": {"name": "x", "q": "}; {"}, "name": "search"}; {"name": "noop"}\nDone.'
    for message in _parsed("llama3_json", text):
        assert _calls(message) == [("search", '{"name": "x", "q": "}; {"}'), ("noop", "{}")]
        assert message.content.strip() == "Done."


def test_an_element_without_a_name_is_content_and_later_calls_still_count() -> None:
    text = '<|tool_call|>[{"foo": 1}, {"name": "noop", "arguments": {}}] ok'
    for message in _parsed("granite", text):
        assert _calls(message) == [("noop", "{}")]
        assert message.content == '{"foo": 1} ok'


def test_close_marker_inside_a_string_is_text() -> None:
    text = '<tool_calls>[{"name": "search", "arguments": {"query": "]</tool_calls>"}}]</tool_calls> after'
    for message in _parsed("jamba", text):
        assert _calls(message) == [("search", '{"query": "]</tool_calls>"}')]
        assert message.content == " after"
