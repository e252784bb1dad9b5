"""Reference codecs on text the catalog does not render: every split of the text gives the same message."""

from __future__ import annotations

import json

import pytest

from contract.cases.catalog import CATALOG, DEFAULT_TOOLS
from contract.cases.family import Sample
from contract.cases.model import Chunk, Delta, Message, RequestContext
from contract.grading.assembly import assemble
from contract.grading.compare import normalized
from fixtures import family
from parsers.reference import load

ENGINE = load()
CONTEXT = RequestContext(tools=DEFAULT_TOOLS, thinking=False)


def _message(name: str, pieces: list[str], context: RequestContext = CONTEXT) -> Message:
    session = ENGINE.factories[name](family(name)).open_stream(context)
    deltas: list[Delta] = []
    for piece in pieces:
        deltas += session.feed(Chunk(piece))
    deltas += session.finish("stop")
    return assemble(deltas)


def _every_split(name: str, text: str, context: RequestContext = CONTEXT) -> Message:
    """The message for `text` in one piece, checked equal for every cut into two pieces."""
    whole = _message(name, [text], context)
    for at in range(1, len(text)):
        split = _message(name, [text[:at], text[at:]], context)
        assert (split.content, split.reasoning) == (whole.content, whole.reasoning), f"cut at {at}"
        assert normalized(split, keep_ids=False) == normalized(whole, keep_ids=False), f"cut at {at}"
    return whole


def test_glm_block_without_a_name_stays_content() -> None:
    text = "<tool_call><arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>after"
    message = _every_split("glm47", text)
    assert message.tool_calls == ()
    assert message.content == text


def test_glm_name_ends_at_a_newline_or_the_first_key() -> None:
    for text in ("<tool_call>get_time\n<arg_key>tz</arg_key>\n<arg_value>UTC</arg_value>\n</tool_call>",
                 "<tool_call>get_time<arg_key>tz</arg_key><arg_value>UTC</arg_value></tool_call>"):
        (call,) = _every_split("glm45", text).tool_calls
        assert (call.name, json.loads(call.arguments)) == ("get_time", {"tz": "UTC"})


@pytest.mark.parametrize("body, content", [
    ("<response>\nIt is sunny.\n</response>", "\nIt is sunny.\n"),
    ("<response>\nLet me think.\n</response><response>\nIt is sunny.\n</response>",
     "\nLet me think.\n\nIt is sunny.\n"),
    ("<response>no framing</response> after", "no framing after"),
    ("<response>\nnever closed\n", "\nnever closed\n"),
])
def test_ernie_response_block_is_content_verbatim(body: str, content: str) -> None:
    message = _every_split("ernie45", body)
    assert message.content == content
    assert message.tool_calls == ()


def test_seed_values_are_not_padded() -> None:
    text = ("<seed:tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
            "</seed:tool_call>")
    (call,) = _every_split("seed_oss", text).tool_calls
    assert json.loads(call.arguments) == {"tz": "\nUTC\n"}



@pytest.mark.parametrize("name", ["kimi_k2", "deepseek_v3", "minimax_m2", "step3"])
@pytest.mark.parametrize("narration", ["And now  the time.", " And now the time. ", "  "])
def test_narration_inside_a_section_keeps_its_words_one_character_at_a_time(name: str, narration: str) -> None:
    """Narration between two calls of one section is content with its spaces, however finely it is streamed;
    whitespace alone there is framing."""
    case = next(c for c in CATALOG if c.id == "tool.content_in_section")
    sample = family(name).sample(case)
    assert isinstance(sample, Sample)
    text = sample.text.replace("And now the time.", narration)
    whole = _every_split(name, text, sample.context)
    assert _message(name, list(text), sample.context).content == whole.content
    assert whole.content.split() == narration.split()
    assert [c.name for c in whole.tool_calls] == ["get_weather", "get_time"]
