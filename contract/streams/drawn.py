"""The chunkings a derandomized profile draws for the generated modes, drawn once and stored.

Under the `ci` profile the `random` and `chars` cells of a (family, case) try the chunkings hypothesis
draws from the cell's input alone (seed: family, case and mode, `grading.stable_seed`; strategy: the
token or character count and the positions near markers). Those draws do not depend on the parser: the
engine draws the same sequence for every parser until one fails, where the search stops. So the sequence
is drawn once with a test that always passes and every parser replays it, stopping at its first failure,
which is exactly the chunking hypothesis would have reported.

Drawing costs about a millisecond of CPU per chunking in hypothesis's engine (more than the reference
parsers themselves spend), so the draws of every (family, case, mode, vocabulary tier) are stored in
`fixtures/drawn_chunkings.jsonl`, one line per input: its key, a fingerprint of what the draw depends
on (the strategy's input, the number of examples, hypothesis's version) and the cuts. An entry whose
fingerprint does not match (a sample rendered differently, a new case, another hypothesis) is drawn
anew, with the same result, only slower; `python -m contract.cli.draws --update` rewrites the file and
`--check` (a test) says what is stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import hypothesis
from hypothesis import HealthCheck, given, seed
from hypothesis import settings as Settings
from hypothesis import strategies as st

from .chunking import Mode, boundary_cuts, marker_char_positions, mode
from .tokenizer import TokenStream

if TYPE_CHECKING:
    from ..cases.family import Family

STORE = Path(__file__).resolve().parents[2] / "fixtures" / "drawn_chunkings.jsonl"
GENERATED = ("random", "chars")

Cuts = tuple[int, ...]


@dataclass(frozen=True)
class Draw:
    """What one generated cell's chunkings depend on: hypothesis draws them from this alone."""

    family: str
    case: str
    mode: str
    size: int  # tokens (token tier) or characters (char tier) that may be cut between
    hot: tuple[int, ...]  # cut positions near markers, drawn from half of the time

    @property
    def key(self) -> str:
        return f"{self.family}:{self.case}:{self.mode}"

    @property
    def seed(self) -> int:
        """Derandomized: from the input, never from the grading code (see `grading.stable_seed`)."""
        return int.from_bytes(hashlib.sha256(self.key.encode()).digest()[:8], "big")

    def fingerprint(self, settings: Settings) -> str:
        basis = json.dumps([self.size, self.hot, settings.max_examples, hypothesis.__version__])
        return hashlib.sha256(basis.encode()).hexdigest()[:16]

    def strategy(self) -> st.SearchStrategy[list[int]]:
        return cuts_strategy(self.size, self.hot)


def cuts_strategy(size: int, hot: Sequence[int]) -> st.SearchStrategy[list[int]]:
    """Sorted unique cut positions in (0, size), half of them drawn near markers when there are any."""
    if size < 2:
        return st.just([])
    anywhere = st.integers(1, size - 1)
    position = st.one_of(st.sampled_from(sorted(hot)), anywhere) if hot else anywhere
    return st.lists(position, unique=True).map(sorted)


def token_cuts(stream: TokenStream, markers: Sequence[str]) -> st.SearchStrategy[list[int]]:
    """Random token groupings; shrinks towards fewer cuts."""
    return cuts_strategy(len(stream.ids), boundary_cuts(stream, markers))


def char_cuts(text: str, markers: Sequence[str]) -> st.SearchStrategy[list[int]]:
    """Random cuts anywhere in the text, inside markers and multi-byte characters included."""
    return cuts_strategy(len(text), marker_char_positions(text, markers))


def draw_of(family: str, case: str, the_mode: Mode, text: str, stream: TokenStream, markers: Sequence[str]) -> Draw:
    if the_mode.tier == "char":
        return Draw(family, case, the_mode.name, len(text), tuple(marker_char_positions(text, markers)))
    return Draw(family, case, the_mode.name, len(stream.ids), tuple(boundary_cuts(stream, markers)))


def draw_live(draw: Draw, settings: Settings) -> tuple[Cuts, ...]:
    """Every chunking hypothesis draws for this input when no example fails, in order."""
    drawn: list[Cuts] = []

    @Settings(parent=settings, database=None, deadline=None, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(cuts=draw.strategy())
    def collect(cuts: list[int]) -> None:
        drawn.append(tuple(cuts))

    seed(draw.seed)(collect)()
    return tuple(drawn)


@cache
def _stored() -> dict[str, tuple[str, tuple[Cuts, ...]]]:
    """`key@fingerprint` -> (fingerprint, cuts); empty when there is no store."""
    path = STORE
    entries: dict[str, tuple[str, tuple[Cuts, ...]]] = {}
    if not path.exists():
        return entries
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            key, fingerprint, cuts = json.loads(line)
            entries[f"{key}@{fingerprint}"] = (fingerprint, tuple(tuple(c) for c in cuts))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: line {n}: not a [key, fingerprint, cuts] entry: {exc}") from None
    return entries


def drawn(draw: Draw, settings: Settings) -> tuple[Cuts, ...]:
    """The chunkings a derandomized profile tries for this input: stored, or drawn now when not."""
    assert settings.derandomize, "a profile that is not derandomized draws anew every time: nothing to store"
    entry = _stored().get(f"{draw.key}@{draw.fingerprint(settings)}")
    return entry[1] if entry is not None else draw_live(draw, settings)


# ---------------------------------------------------------------- keeping the store current


def every_draw(families: Iterable[Family], tiers: Iterable[str]) -> list[Draw]:
    """The draws of every Sample of these families in these vocabulary tiers (both tiers: one store)."""
    from ..cases.catalog import CATALOG
    from ..cases.family import Sample
    from ..cases.forced import shapes_for
    from .tokenizer import family_stream

    draws: dict[tuple[str, Draw], None] = {}
    for tier in tiers:
        for family in (f.in_tier(tier) for f in families):
            for the_case in CATALOG:
                sample = family.sample(the_case)
                if not isinstance(sample, Sample):
                    continue
                for shape in shapes_for(sample.context.tool_choice):
                    written = sample.written_as(shape)
                    stream = family_stream(family, written.rendered)
                    for name in GENERATED:
                        draws[(tier, draw_of(family.name, the_case.id, mode(name), written.text, stream,
                                             family.markers))] = None
    return list(dict.fromkeys(draw for _, draw in draws))


def stale(draws: Sequence[Draw], settings: Settings) -> tuple[list[Draw], int]:
    """(draws the store lacks, entries it holds that no draw needs)."""
    wanted = {f"{d.key}@{d.fingerprint(settings)}" for d in draws}
    have = set(_stored())
    return [d for d in draws if f"{d.key}@{d.fingerprint(settings)}" not in have], len(have - wanted)


def write(draws: Sequence[Draw], settings: Settings) -> None:
    """Draw every input (reusing current entries) and rewrite the store, one entry per line, sorted."""
    stored = _stored()
    lines = []
    for draw in sorted(draws, key=lambda d: (d.key, d.size, d.hot)):
        fingerprint = draw.fingerprint(settings)
        entry = stored.get(f"{draw.key}@{fingerprint}")
        cuts = entry[1] if entry is not None else draw_live(draw, settings)
        lines.append(json.dumps([draw.key, fingerprint, [list(c) for c in cuts]], separators=(",", ":")))
    STORE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _stored.cache_clear()
