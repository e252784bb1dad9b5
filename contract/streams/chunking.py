"""Modes: how a sample's text reaches the parser, and the chunkings each streaming mode produces (the
generated modes' are drawn by hypothesis: `contract.streams.drawn`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..cases.model import Chunk
from .tokenizer import TokenStream

BOUNDARY_REACH = 3  # tokens on each side of a marker edge where `boundaries` cuts
BURSTS = (2, 3, 5, 8)


@dataclass(frozen=True)
class Mode:
    name: str
    tier: str  # batch | token | char
    isolation: bool = False  # judged against the parser's own solo runs, not the expected result (`concurrent`)
    surface: str = "chat"  # the API the server answers on: Chat Completions, or the Responses API ("responses")
    chunks_as: str = ""  # the chat mode whose chunkings this one streams ("": its own)

    @property
    def streaming(self) -> bool:
        return self.tier != "batch"

    @property
    def chunking(self) -> str:
        """The name its chunkings are made by."""
        return self.chunks_as or self.name

    @property
    def generated(self) -> bool:
        """Chunkings come from hypothesis (and are shrunk on failure)."""
        return self.name in ("random", "chars")


BATCH = Mode("batch", "batch")
MODES: tuple[Mode, ...] = (
    BATCH,
    Mode("whole", "token"),
    Mode("tokens", "token"),
    *(Mode(f"bursts-{n}", "token") for n in BURSTS),
    Mode("boundaries", "token"),
    Mode("random", "token"),
    Mode("chars", "char"),
    Mode("concurrent", "token", isolation=True),  # the case and a partner request interleaved (`interleave`)
    # the Responses API: the same output, read from its output items, and from its events streamed a token a delta
    Mode("responses", "batch", surface="responses"),
    Mode("responses-tokens", "token", surface="responses", chunks_as="tokens"),
)
CONFORMANCE_MODES = tuple(m for m in MODES if not m.isolation)  # judged against the expected result
CHAT_MODES = tuple(m for m in CONFORMANCE_MODES if m.surface == "chat")
SURFACES = tuple(dict.fromkeys(m.surface for m in MODES))
MODES_BY_NAME = {m.name: m for m in MODES}


def mode(name: str) -> Mode:
    try:
        return MODES_BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown mode {name!r}; known: {', '.join(MODES_BY_NAME)}") from None


def token_chunks(stream: TokenStream, cuts: Sequence[int]) -> tuple[Chunk, ...]:
    """Cut the token stream before each token index in `cuts` (0 < cut < len)."""
    edges = [0, *sorted(set(cuts)), len(stream.ids)]
    return tuple(
        Chunk("".join(stream.pieces[a:b]), stream.ids[a:b]) for a, b in zip(edges, edges[1:], strict=False) if b > a
    )


def char_chunks(text: str, cuts: Sequence[int]) -> tuple[Chunk, ...]:
    """Cut the text anywhere, inside tokens too; no token ids (a re-chunking proxy has none)."""
    edges = [0, *sorted(set(cuts)), len(text)]
    return tuple(Chunk(text[a:b]) for a, b in zip(edges, edges[1:], strict=False) if b > a)


def _token_index_at(offsets: list[int], char: int) -> int:
    """The token boundary at or just before a character offset."""
    index = 0
    for i, offset in enumerate(offsets):
        if offset <= char:
            index = i
    return index


def boundary_cuts(stream: TokenStream, markers: Sequence[str]) -> list[int]:
    """Every token position within BOUNDARY_REACH tokens of the start or end of a marker occurrence."""
    text, offsets, n = stream.text, stream.offsets(), len(stream.ids)
    cuts: set[int] = set()
    for marker in markers:
        start = text.find(marker)
        while start != -1:
            for edge in (start, start + len(marker)):
                at = _token_index_at(offsets, edge)
                cuts.update(p for p in range(at - BOUNDARY_REACH, at + BOUNDARY_REACH + 1) if 0 < p < n)
            start = text.find(marker, start + 1)
    return sorted(cuts)


def deterministic_chunkings(
    mode: Mode, stream: TokenStream, markers: Sequence[str]
) -> Iterator[tuple[Chunk, ...]]:
    """The chunkings of a non-generated streaming mode."""
    n, name = len(stream.ids), mode.chunking
    if name == "whole":
        yield token_chunks(stream, [])
    elif name == "tokens":
        yield token_chunks(stream, range(1, n))
    elif name.startswith("bursts-"):
        size = int(name.split("-", 1)[1])
        yield token_chunks(stream, range(size, n, size))
    elif name == "boundaries":
        cuts = boundary_cuts(stream, markers)
        yield token_chunks(stream, cuts)
        for cut in cuts:
            yield token_chunks(stream, [cut])
    else:
        raise ValueError(f"mode {mode.name!r} has no deterministic chunkings")


def marker_char_positions(text: str, markers: Sequence[str]) -> list[int]:
    """Every character offset inside a marker occurrence, or one character around it."""
    hot: set[int] = set()
    for marker in markers:
        start = text.find(marker)
        while start != -1:
            hot.update(range(max(1, start - 1), min(len(text), start + len(marker) + 2)))
            start = text.find(marker, start + 1)
    return sorted(p for p in hot if 0 < p < len(text))
