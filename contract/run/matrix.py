"""The matrix: which cells a run has, what a cell records before and without grading, and its verdict.

A cell is (parser under test, case, mode); the cells of one (parser, case) form a group, graded together
(`contract.grading.grader`, in a worker: `contract.grading.isolation`). Nothing here imports an engine, hypothesis or
the checks, so the processes that only plan and judge stay light. The families are the run's to give
(`registry`: name -> `Family`; a run passes `fixtures.all_families()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import expectations
from ..cases.catalog import CATALOG, case
from ..cases.family import Family, NotApplicable, Unimplemented
from ..grading.adapter import EngineModule, engine_module
from ..streams.chunking import MODES, mode
from ..streams.tokenizer import vocabulary_label
from .outcome import GRADED, Outcome
from .record import CellRecord


@dataclass(frozen=True)
class Cell:
    engine: str  # the engine spec given on the command line (name or module path)
    engine_name: str
    parser_name: str
    family: str | None  # None: the parser maps to no family fixture
    case: str
    mode: str
    vocabulary: str | None = None  # what the cell is graded on (`vocabulary_label`); None without a family

    @property
    def parser(self) -> str:
        return f"{self.engine_name}/{self.parser_name}"

    @property
    def id(self) -> str:
        return f"{self.parser}:{self.case}:{self.mode}"


@dataclass(frozen=True)
class CellGroup:
    """The cells of one (parser, case), graded together in one worker: the sample is rendered, and a
    chunking that several modes (or generated examples) share is streamed, once."""

    cells: tuple[Cell, ...]

    @property
    def id(self) -> str:
        first = self.cells[0]
        return f"{first.parser}:{first.case}"


def grouped(cells: Iterable[Cell]) -> list[CellGroup]:
    """The cells of each (parser, case) as one group, in plan order."""
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.engine, cell.parser_name, cell.case), []).append(cell)
    return [CellGroup(tuple(group)) for group in groups.values()]


def shard(groups: Sequence[CellGroup], spec: str | None) -> list[CellGroup]:
    """`K/N`: the K-th of N deterministic, balanced parts of a plan (every N-th group from the K-th)."""
    if spec is None:
        return list(groups)
    k, n = parse_shard(spec)
    return [g for i, g in enumerate(groups) if i % n == k - 1]


def parse_shard(spec: str) -> tuple[int, int]:
    """`"2/4"` -> (2, 4); ValueError names what is wrong."""
    try:
        k, n = (int(part) for part in spec.split("/"))
    except ValueError:
        raise ValueError(f"--shard {spec!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise ValueError(f"--shard {spec!r}: K must be between 1 and N")
    return k, n


def plan(
    engines: Sequence[str],
    families: Iterable[str] | None = None,
    modes: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
    *,
    registry: Mapping[str, Family],
) -> list[Cell]:
    """Every cell of the run, in a stable order (the same in every process, and every shard's plan);
    `families` narrows the run to some of the `registry`'s."""
    wanted_families = set(families) if families else None
    wanted_modes = [mode(m) for m in modes] if modes else list(MODES)
    wanted_cases = [case(c) for c in cases] if cases else list(CATALOG)
    cells: list[Cell] = []
    for spec in engines:
        module = engine_module(spec)
        for parser_name, family in module.mapping.items():
            if wanted_families is not None and family not in wanted_families:
                continue
            graded_on = registry.get(family) if family else None
            vocabulary = vocabulary_label(graded_on) if graded_on else None
            for c in wanted_cases:
                for m in wanted_modes if family else [mode("batch")]:
                    cells.append(Cell(spec, module.name, parser_name, family, c.id, m.name, vocabulary))
    return cells


SLOWDOWN_MODES = ("batch", "tokens")  # where a parser's CPU time is set against the reference parser's


def parser_names(module: EngineModule) -> set[str]:
    """Every `engine/name` the engine module grades."""
    return {f"{module.name}/{name}" for name in module.mapping}


REASONING_IN_CONTENT = "reasoning-in-content"  # the sample as graded for append-think parsers


def sample_key(family: str, case_id: str, variant: str = "") -> str:
    """How cells name their sample in the results' samples table: `family:case[:variant]`."""
    return f"{family}:{case_id}" + (f":{variant}" if variant else "")


def settled(cell: Cell, registry: Mapping[str, Family]) -> dict[str, Any] | None:
    """What a cell records when its outcome needs no engine (n/a, unimplemented), else None."""
    if cell.family is None:
        return {"outcome": "unimplemented", "reason": f"{cell.parser} maps to no family fixture"}
    family = registry.get(cell.family)
    if family is None:
        return {"outcome": "unimplemented", "reason": f"{cell.parser} maps to family {cell.family!r}, which has no fixture"}
    position = family.position(case(cell.case))
    if isinstance(position, NotApplicable):
        return {"outcome": "n/a", "reason": position.reason}
    if isinstance(position, Unimplemented):
        return {"outcome": "unimplemented", "reason": position.reason}
    return None


def judge(record: CellRecord, known: expectations.Expectations,
          other_tier: tuple[str, expectations.Expectations] | None = None, *, rerun: str | None = None) -> CellRecord:
    """Turn a graded status into the cell's verdict against what is known about it (xfail, fixed, changed);
    with the other vocabulary tier's expectations (given for a family the two tiers grade on different
    tokens), a note says which tier a failure needs. `rerun`: the command that grades the cell again, recorded
    with the verdict."""
    status = record.outcome
    if status not in GRADED:
        return replace(record, rerun=rerun)
    notes = record.notes
    if other_tier is not None:
        note = _tier_note(status != Outcome.PASS, *other_tier, record)
        notes += (note,) if note else ()
    bugs = known.lookup(record.parser, record.case, record.mode)
    recorded = known.recorded(record.parser, record.case, record.mode)
    verdict = expectations.resolve(status, record.signature or {}, bool(bugs), recorded)
    known_fields: dict[str, Any] = {}
    if bugs:
        ids = tuple(bug.id for bug in bugs)
        known_fields = {"bugs": ids, "reason": known_reason(bugs), "untriaged": any(bug.untriaged for bug in bugs),
                        "link": next((bug.link for bug in bugs if bug.link), None)}
        if verdict.outcome == Outcome.FIXED:
            known_fields["reason"] = (f"known broken (bug {', '.join(ids)}) but passes now: "
                                      "`nox -s update_expectations` takes it out of the bug's cells")
    return replace(record, outcome=Outcome(verdict.outcome), diff=verdict.diff, notes=notes, rerun=rerun,
                   **known_fields)


def known_reason(bugs: Sequence[expectations.Bug]) -> str:
    """The reasons of the bugs a cell cites, each once."""
    if len(bugs) == 1:
        return bugs[0].reason
    return "; ".join(f"{bug.id}: {bug.reason}" for bug in bugs)


def _tier_note(failing: bool, tier: str, other: expectations.Expectations, record: CellRecord) -> str | None:
    """Whether the cell fails on the other vocabulary tier too (each tier is triaged in full)."""
    there = bool(other.lookup(record.parser, record.case, record.mode))
    if failing:
        return (f"vocabulary: known broken on the {tier} tier too" if there else
                f"vocabulary: fails on {record.vocabulary} only; passes on the {tier} tier")
    return (f"vocabulary: passes on {record.vocabulary}; known broken on the {tier} tier only "
            f"(--vocabulary {tier} shows it)") if there else None


def identity(cell: Cell) -> dict[str, Any]:
    """The fields of a cell's record its plan tells: what is graded, before any grading."""
    return {"engine": cell.engine_name, "parser": cell.parser, "family": cell.family, "case": cell.case,
            "kind": case(cell.case).kind, "mode": cell.mode, "tier": mode(cell.mode).tier,
            "vocabulary": cell.vocabulary}


def settled_record(cell: Cell, registry: Mapping[str, Family]) -> CellRecord | None:
    """The record of a cell whose outcome needs no engine (n/a, unimplemented), else None."""
    early = settled(cell, registry)
    return None if early is None else CellRecord(**identity(cell), **{**early, "outcome": Outcome(early["outcome"])})
