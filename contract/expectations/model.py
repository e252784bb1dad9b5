"""What a KnownBroken file says: named bugs, each with the cells it explains, and the recorded signatures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..streams.chunking import CHAT_MODES, MODES

# "*" and the tier names stand for the Chat Completions modes judged against the expected result; a mode judged
# against the parser's own solo runs (`concurrent`) fails for other reasons, and one of another surface (the
# Responses API) runs other server code: both are always named
EVERY_MODE = "*"
TIERS: dict[str, tuple[str, ...]] = {
    tier: tuple(m.name for m in CHAT_MODES if m.tier == tier) for tier in dict.fromkeys(m.tier for m in CHAT_MODES)
}
MODE_NAMES = tuple(m.name for m in MODES)
EVERY_MODE_NAMES = tuple(m.name for m in CHAT_MODES)

CellKey = tuple[str, str, str]  # (parser, case, mode)


@dataclass(frozen=True)
class Place:
    """Parsers × cases × modes: cells a bug explains, as one `cells` row of the file says them."""

    parsers: tuple[str, ...]
    cases: tuple[str, ...]
    modes: tuple[str, ...]  # mode names, expanded from tiers and "*"

    def cells(self) -> Iterable[CellKey]:
        return ((p, c, m) for p in self.parsers for c in self.cases for m in self.modes)


@dataclass(frozen=True)
class Bug:
    """One way an engine's parsers break: said once, with every cell it explains."""

    id: str  # unique in its file; cells cite it
    reason: str  # what the parser does wrong, once; where it shows is the places' business
    places: tuple[Place, ...]
    link: str = ""  # upstream issue or pull request
    untriaged: bool = False  # written by `update`; a person replaces the reason and deletes the flag

    def cells(self) -> Iterable[CellKey]:
        return (cell for place in self.places for cell in place.cells())


@dataclass(frozen=True)
class Expectations:
    """One engine's bugs, which of them each cell cites (file order), and each covered cell's recorded
    signature."""

    bugs: Mapping[str, Bug]
    cited: Mapping[CellKey, tuple[str, ...]]
    signatures: Mapping[CellKey, Mapping[str, Any]]

    def lookup(self, parser: str, case: str, mode: str) -> tuple[Bug, ...]:
        """The bugs that explain a cell; empty when it is not known broken."""
        return tuple(self.bugs[bug] for bug in self.cited.get((parser, case, mode), ()))

    def recorded(self, parser: str, case: str, mode: str) -> Mapping[str, Any] | None:
        return self.signatures.get((parser, case, mode))


NONE = Expectations({}, {}, {})


def expand_modes(value: str | Sequence[str]) -> tuple[str, ...]:
    """`"*"`, or a list of mode and tier names, as mode names in catalog order; ValueError names the bad one.
    `"*"` and a tier are the conformance modes they hold: `concurrent` is always named."""
    names = [value] if isinstance(value, str) else list(value)
    wanted: set[str] = set()
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"{name!r} is not a string")
        if name == EVERY_MODE:
            wanted.update(EVERY_MODE_NAMES)
        elif name in TIERS:
            wanted.update(TIERS[name])
        elif name in MODE_NAMES:
            wanted.add(name)
        else:
            raise ValueError(f"unknown mode {name!r}; modes are {', '.join(MODE_NAMES)}, tiers "
                             f"{', '.join(TIERS)}, or \"*\"")
    if not wanted:
        raise ValueError("no modes")
    return tuple(m for m in MODE_NAMES if m in wanted)


def compress_modes(modes: Iterable[str]) -> str | list[str]:
    """The shortest spelling of a set of modes: `"*"`, or tiers where a whole tier is covered."""
    chosen = set(modes)
    named = [m for m in MODE_NAMES if m in chosen and m not in EVERY_MODE_NAMES]  # never in "*" or a tier
    if chosen >= set(EVERY_MODE_NAMES):
        return [EVERY_MODE, *named] if named else EVERY_MODE
    out: list[str] = []
    for tier, members in TIERS.items():
        if len(members) > 1 and set(members) <= chosen:
            out.append(tier)
        else:
            out += [m for m in members if m in chosen]
    return out + named
