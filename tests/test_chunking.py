"""Chunkings of every streaming mode: lossless, token-aligned, and cut where each mode promises."""

from __future__ import annotations

import bisect
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.cases.catalog import CATALOG
from contract.cases.family import Sample
from contract.cases.model import Chunk
from contract.streams.chunking import (
    BOUNDARY_REACH,
    MODES,
    Mode,
    boundary_cuts,
    char_chunks,
    deterministic_chunkings,
    mode,
)
from contract.streams.drawn import char_cuts, token_cuts
from contract.streams.tokenizer import TokenStream, family_tokenizer, token_stream
from fixtures import all_families, family

SAMPLES = [s for c in CATALOG for f in all_families().values() if isinstance(s := f.sample(c), Sample)]
DETERMINISTIC = [m for m in MODES if m.streaming and not m.generated and not m.isolation]
FEW = settings(max_examples=15, deadline=None, database=None)


def _id(s: Sample) -> str:
    return f"{s.family}-{s.case.id}"


def _stream(s: Sample) -> TokenStream:
    return token_stream(family_tokenizer(family(s.family)), s.rendered)


def _markers(s: Sample) -> tuple[str, ...]:
    return family(s.family).markers


def _chunkings(name: str, s: Sample) -> list[tuple[Chunk, ...]]:
    return list(deterministic_chunkings(mode(name), _stream(s), _markers(s)))


def _cut_positions(chunks: tuple[Chunk, ...]) -> set[int]:
    """The token positions where a chunking cuts (its inner chunk edges)."""
    ends = list(accumulate(len(c.token_ids or ()) for c in chunks))
    return set(ends[:-1])


def _marker_edges(text: str, markers: tuple[str, ...]) -> set[int]:
    edges: set[int] = set()
    for marker in markers:
        at = text.find(marker)
        while at != -1:
            edges |= {at, at + len(marker)}
            at = text.find(marker, at + 1)
    return edges


def _near_edges(stream: TokenStream, markers: tuple[str, ...]) -> set[int]:
    """Token positions within BOUNDARY_REACH of the token boundary at (or before) each marker edge."""
    offsets = stream.offsets()
    n = len(stream.ids)
    near: set[int] = set()
    for edge in _marker_edges(stream.text, markers):
        at = bisect.bisect_right(offsets, edge) - 1
        near |= {p for p in range(at - BOUNDARY_REACH, at + BOUNDARY_REACH + 1) if 0 < p < n}
    return near


def test_deterministic_modes_listed() -> None:
    assert {m.name for m in DETERMINISTIC} >= {"whole", "tokens", "boundaries", "bursts-2"}
    with pytest.raises(ValueError):
        next(deterministic_chunkings(Mode("random", "token"), _stream(SAMPLES[0]), ()))


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
@pytest.mark.parametrize("mode_", DETERMINISTIC, ids=lambda m: m.name)
def test_chunkings_are_lossless(mode_: Mode, sample: Sample) -> None:
    stream = _stream(sample)
    chunkings = list(deterministic_chunkings(mode_, stream, _markers(sample)))
    assert chunkings
    for chunks in chunkings:
        assert "".join(c.text for c in chunks) == sample.text
        assert tuple(i for c in chunks for i in c.token_ids or ()) == stream.ids
        assert all(c.token_ids for c in chunks)


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_tokens_mode_is_one_token_per_chunk(sample: Sample) -> None:
    (chunks,) = _chunkings("tokens", sample)
    assert len(chunks) == len(_stream(sample).ids)
    assert all(len(c.token_ids or ()) == 1 for c in chunks)


@pytest.mark.parametrize("name", [m.name for m in DETERMINISTIC if m.name.startswith("bursts-")])
def test_bursts_hold_at_most_n_tokens(name: str) -> None:
    size = int(name.removeprefix("bursts-"))
    for sample in SAMPLES:
        (chunks,) = _chunkings(name, sample)
        lengths = [len(c.token_ids or ()) for c in chunks]
        assert max(lengths) <= size
        assert len(chunks) == -(-len(_stream(sample).ids) // size)


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_boundaries_cut_next_to_every_marker_edge(sample: Sample) -> None:
    stream, markers = _stream(sample), _markers(sample)
    near = _near_edges(stream, markers)
    assert set(boundary_cuts(stream, markers)) == near
    first, *singles = _chunkings("boundaries", sample)
    assert _cut_positions(first) == near
    assert [_cut_positions(c) for c in singles] == [{p} for p in sorted(near)]


def test_boundaries_cut_somewhere() -> None:
    assert any(boundary_cuts(_stream(s), _markers(s)) for s in SAMPLES)


@pytest.mark.parametrize("cuts", [[], [1], [3, 1, 3], [0, 5, 100]])
def test_char_chunks_preserve_text_without_ids(cuts: list[int]) -> None:
    text = "naïve 東京 🌦️ <tool_call>"
    chunks = char_chunks(text, cuts)
    assert "".join(c.text for c in chunks) == text
    assert all(c.token_ids is None and c.text for c in chunks)
    assert len(chunks) == 1 + len({p for p in cuts if 0 < p < len(text)})


def _assert_cut_positions(cuts: list[int], size: int) -> None:
    assert cuts == sorted(set(cuts))
    assert all(0 < p < size for p in cuts)


@FEW
@given(st.data())
def test_token_cuts_are_sorted_unique_in_range(data: st.DataObject) -> None:
    sample = data.draw(st.sampled_from(SAMPLES))
    stream = _stream(sample)
    cuts = data.draw(token_cuts(stream, _markers(sample)))
    _assert_cut_positions(cuts, len(stream.ids))


@FEW
@given(st.data())
def test_char_cuts_are_sorted_unique_in_range(data: st.DataObject) -> None:
    sample = data.draw(st.sampled_from(SAMPLES))
    cuts = data.draw(char_cuts(sample.text, _markers(sample)))
    _assert_cut_positions(cuts, len(sample.text))
    assert "".join(c.text for c in char_chunks(sample.text, cuts)) == sample.text
