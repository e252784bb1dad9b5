"""The reference parsers: streaming equals one-shot, text is only ever appended, partial markers wait."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from contract.cases.catalog import CATALOG, DEFAULT_TOOLS
from contract.cases.family import Sample
from contract.cases.model import Chunk, Delta, Message, RequestContext
from contract.grading.adapter import ParserUnderTest
from contract.grading.assembly import assemble
from contract.grading.compare import normalized
from contract.streams.chunking import token_chunks
from contract.streams.tokenizer import family_stream
from fixtures import all_families, family
from fixtures.families.kimi_k2 import ARGUMENT_BEGIN, CALL_BEGIN, SECTION_BEGIN
from parsers.reference import load

ENGINE = load()
PARTIAL = "<|tool_calls_sec"  # a proper prefix of the kimi_k2 section marker
SAMPLES = [s for c in CATALOG for f in all_families().values() if isinstance(s := f.sample(c), Sample)]


def _id(s: Sample) -> str:
    return f"{s.family}-{s.case.id}"


def _parser(name: str) -> ParserUnderTest:
    return ENGINE.factories[name](family(name))


def _fed_one_token_at_a_time(sample: Sample) -> tuple[Message, list[tuple[str, str]]]:
    """The assembled message, and the (content, reasoning) shown so far after every chunk."""
    stream = family_stream(family(sample.family), sample.rendered)
    session = _parser(sample.family).open_stream(sample.context)
    deltas: list[Delta] = []
    content = reasoning = ""
    shown = []
    for chunk in token_chunks(stream, range(1, len(stream.ids))):
        new = session.feed(chunk)
        deltas += new
        content += "".join(d.content or "" for d in new)
        reasoning += "".join(d.reasoning or "" for d in new)
        shown.append((content, reasoning))
    deltas += session.finish(sample.stop)
    return assemble(deltas), shown


def _batch(sample: Sample) -> Message:
    ids = family_stream(family(sample.family), sample.rendered).ids
    return _parser(sample.family).parse(sample.text, ids, sample.context, sample.stop)


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_stream_of_tokens_equals_batch(sample: Sample) -> None:
    batch = _batch(sample)
    streamed, _ = _fed_one_token_at_a_time(sample)
    keep_ids = sample.case.native_ids
    assert normalized(streamed, keep_ids=keep_ids) == normalized(batch, keep_ids=keep_ids)
    assert streamed.finish_reason == batch.finish_reason
    # one machine for both: even the argument text is identical, not just equal as JSON
    assert [c.arguments for c in streamed.tool_calls] == [c.arguments for c in batch.tool_calls]


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_streamed_text_only_grows_towards_the_final_text(sample: Sample) -> None:
    final = _batch(sample)
    _, so_far = _fed_one_token_at_a_time(sample)
    for n, (content, reasoning) in enumerate(so_far):
        assert final.content.startswith(content), f"after chunk {n}: {content[-60:]!r}"
        assert final.reasoning.startswith(reasoning), f"after chunk {n}: {reasoning[-60:]!r}"


def _feed(pieces: Iterable[str]) -> list[Message]:
    """The kimi_k2 reference stream fed text pieces: the assembled message after each piece."""
    session = _parser("kimi_k2").open_stream(RequestContext(tools=DEFAULT_TOOLS))
    deltas: list[Delta] = []
    out = []
    for piece in pieces:
        deltas += session.feed(Chunk(piece))
        out.append(assemble(deltas))
    return out


def test_partial_marker_is_withheld_then_released() -> None:
    assert SECTION_BEGIN.startswith(PARTIAL)
    held, released = _feed(["Hello " + PARTIAL, "!? is no marker."])
    assert held.content == "Hello "
    assert held.tool_calls == ()
    assert released.content == f"Hello {PARTIAL}!? is no marker."
    assert released.tool_calls == ()


def test_partial_marker_that_completes_opens_a_section() -> None:
    call = SECTION_BEGIN.removeprefix(PARTIAL) + CALL_BEGIN + "functions.get_time:0" + ARGUMENT_BEGIN
    held, opened = _feed(["Hello " + PARTIAL, call + '{"tz": "UTC"}'])
    assert held.content == opened.content == "Hello "
    assert [(c.name, c.id) for c in opened.tool_calls] == [("get_time", "functions.get_time:0")]
