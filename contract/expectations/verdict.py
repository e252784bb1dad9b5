"""A graded cell against what is known about it: xfail, fixed or changed, and the bugs it cites."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..grading.outcome import GRADED, Outcome
from ..grading.record import CellRecord
from .model import Bug, Expectations


@dataclass(frozen=True)
class Verdict:
    outcome: str
    diff: str | None = None


def resolve(status: str, current: Mapping[str, Any], known: bool, recorded: Mapping[str, Any] | None) -> Verdict:
    """Combine a graded status with whether a bug cites the cell and the failure recorded for it: a cited cell
    that fails as recorded is xfail, one that passes is fixed, one that fails differently is changed."""
    if not known:
        return Verdict(status)
    if status == "pass":
        return Verdict("fixed")
    if recorded is None or dict(recorded) == dict(current):
        return Verdict("xfail")
    diff = "\n".join(difflib.unified_diff(_pretty(recorded), _pretty(current), "recorded", "now", lineterm=""))
    return Verdict("changed", diff)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).splitlines()


def judge(record: CellRecord, known: Expectations,
          other_tier: tuple[str, Expectations] | None = None, *, rerun: str | None = None) -> CellRecord:
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
    verdict = resolve(status, record.signature or {}, bool(bugs), recorded)
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


def known_reason(bugs: Sequence[Bug]) -> str:
    """The reasons of the bugs a cell cites, each once."""
    if len(bugs) == 1:
        return bugs[0].reason
    return "; ".join(f"{bug.id}: {bug.reason}" for bug in bugs)


def _tier_note(failing: bool, tier: str, other: Expectations, record: CellRecord) -> str | None:
    """Whether the cell fails on the other vocabulary tier too (each tier is triaged in full)."""
    there = bool(other.lookup(record.parser, record.case, record.mode))
    if failing:
        return (f"vocabulary: known broken on the {tier} tier too" if there else
                f"vocabulary: fails on {record.vocabulary} only; passes on the {tier} tier")
    return (f"vocabulary: passes on {record.vocabulary}; known broken on the {tier} tier only "
            f"(--vocabulary {tier} shows it)") if there else None
