"""The coverage ratchet: what an engine's registry coverage was when it last landed, and the check against it.

Every engine with a parser registry keeps `parsers/<package>/coverage.toml` beside its pipelines:

    registered = 100   # tool + reasoning names the pinned release registers
    covered = 46       # of them graded, or bound to the implementation of a graded name
    [[not_graded]]
    reason = "no family yet for its wire format: ..."
    tool = ["apertus"]
    reasoning = []

A grade checks the live registry against it (`check`): the covered share may not fall below
covered / registered, and every registered name is either covered or listed under a reason, and only
then. Standard library only.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .pipeline import KINDS, Coverage

FILE_NAME = "coverage.toml"


class CoverageRecordError(ValueError):
    """A coverage record that cannot be read, named by file and key."""


@dataclass(frozen=True)
class CoverageRecord:
    """An engine's recorded coverage: the counts at its last landing and why each other name is not graded."""

    path: Path
    registered: int
    covered: int
    not_graded: Mapping[tuple[str, str], str]  # (kind, name) -> reason

    @property
    def share(self) -> float:
        return self.covered / self.registered if self.registered else 1.0


def read_record(path: Path) -> CoverageRecord:
    """Read and check one record; a problem raises one line naming the file and key."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CoverageRecordError(f"{path}: {exc}") from None
    unknown = set(raw) - {"registered", "covered", "not_graded"}
    if unknown:
        raise CoverageRecordError(f"{path}: unknown key {sorted(unknown)[0]!r}")
    counts = {}
    for key in ("registered", "covered"):
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CoverageRecordError(f"{path}: key {key!r}: expected a count, not {value!r}")
        counts[key] = value
    not_graded: dict[tuple[str, str], str] = {}
    for n, entry in enumerate(raw.get("not_graded", [])):
        where = f"{path}: not_graded[{n}]"
        if not isinstance(entry, dict) or set(entry) - {"reason", *KINDS}:
            raise CoverageRecordError(f"{where}: expected keys reason, {', '.join(KINDS)}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise CoverageRecordError(f"{where}: key 'reason': a non-empty text is required")
        for kind in KINDS:
            names = entry.get(kind, [])
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                raise CoverageRecordError(f"{where}: key {kind!r}: expected an array of names")
            for name in names:
                if (kind, name) in not_graded:
                    raise CoverageRecordError(f"{where}: {kind} name {name!r} is listed twice")
                not_graded[(kind, name)] = reason
    if counts["covered"] + len(not_graded) != counts["registered"]:
        raise CoverageRecordError(
            f"{path}: covered ({counts['covered']}) + names not graded ({len(not_graded)}) must equal "
            f"registered ({counts['registered']})")
    return CoverageRecord(path, counts["registered"], counts["covered"], not_graded)


def engine_record(adapter_file: str | Path) -> CoverageRecord | None:
    """The record beside an engine's adapter package (`parsers/<package>/coverage.toml`), if it keeps one."""
    path = Path(adapter_file).resolve().parent / FILE_NAME
    if path.is_relative_to(Path.cwd()):  # named as a person in the checkout would type it
        path = path.relative_to(Path.cwd())
    return read_record(path) if path.is_file() else None


def check(engine: str, rows: Iterable[Coverage], record: CoverageRecord) -> list[str]:
    """Where the live registry disagrees with the record: one line each (none: the ratchet holds)."""
    rows = list(rows)
    covered = [r for r in rows if r.families]
    problems = []
    for row in rows:
        key = (row.kind, row.name)
        if not row.families and key not in record.not_graded:
            problems.append(f"{engine} {row.kind} parser {row.name!r} is registered but neither graded nor listed "
                            f"in {record.path} with the reason it is not")
        elif row.families and key in record.not_graded:
            problems.append(f"{engine} {row.kind} parser {row.name!r} is graded ({'/'.join(row.families)}) but "
                            f"{record.path} lists it as not graded: delete the entry and count it as covered")
    live = {(r.kind, r.name) for r in rows}
    problems += [f"{record.path} lists {kind} parser {name!r}, which {engine} does not register"
                 for kind, name in record.not_graded if (kind, name) not in live]
    share = len(covered) / len(rows) if rows else 1.0
    if share < record.share:
        problems.append(f"{engine} covers {len(covered)} of {len(rows)} registered names ({share:.0%}), below the "
                        f"{record.covered} of {record.registered} ({record.share:.0%}) recorded in {record.path}")
    elif not problems and (len(covered), len(rows)) != (record.covered, record.registered):
        problems.append(f"{engine} covers {len(covered)} of {len(rows)} registered names: record it in "
                        f"{record.path} (covered = {len(covered)}, registered = {len(rows)}; it says "
                        f"{record.covered} of {record.registered})")
    return problems


def with_reasons(rows: Iterable[Coverage], reasons: Mapping[tuple[str, str], str]) -> tuple[Coverage, ...]:
    """The coverage rows, each name that is not graded carrying its recorded reason."""
    return tuple(replace(r, reason=reasons.get((r.kind, r.name))) if not r.families else r for r in rows)
