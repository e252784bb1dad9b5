"""The matrix itself: one test per (parser, case), its modes' cells graded together, collected only under
`pytest --grade`. Every cell is recorded; the test fails when one of its cells fails the run. One more test per
engine holds the coverage ratchet: its registry against `parsers/<package>/coverage.toml`."""

from __future__ import annotations

import pytest

from contract.expectations import judge
from contract.grading.adapter import engine_module
from contract.grading.cell import CellGroup, settled_record
from contract.grading.coverage_record import FILE_NAME, check, engine_record
from contract.grading.isolation import IsolatedGrader
from contract.grading.record import CellRecord
from contract.run.results import RecordLog

PASSING = ("pass",)
SKIPPING = ("n/a", "skip")


def _explain(record: CellRecord) -> str:
    lines = [f"{record.parser} {record.case} {record.mode}: {record.outcome}"]
    if record.reason:
        lines.append(f"reason: {record.reason}")
    lines += [f"- {f.check}: {f.detail}" for f in record.failures[:8]]
    if record.chunking:
        lines.append(f"failing chunking: {list(record.chunking)!r}"[:2000])
    if record.diff:
        lines.append(record.diff)
    if record.error:
        lines.append(record.error)
    lines.append(f"rerun: {record.rerun}")
    return "\n".join(lines)


def test_cells(group: CellGroup, grader: IsolatedGrader, families, known, other_tier, rerun,
               record_log: RecordLog) -> None:
    records = []
    early = [settled_record(cell, families) for cell in group.cells]
    if all(early):  # n/a or unimplemented: no worker needed
        graded = [(record, {}) for record in early]
    else:
        graded = [(g.record, g.samples) for g in grader.grade(group.cells)]
    for (record, samples), cell in zip(graded, group.cells, strict=True):
        record = judge(record, known(cell.engine_name), other_tier(cell), rerun=rerun(cell))
        record_log.write(record, samples)
        records.append(record)
    outcomes = {r.outcome for r in records}
    failing = [r for r in records if r.outcome not in (*PASSING, *SKIPPING, "xfail")]
    if failing:
        pytest.fail("\n\n".join(_explain(r) for r in failing), pytrace=False)
    if "xfail" in outcomes:
        known_broken = [r for r in records if r.outcome == "xfail"]
        pytest.xfail("; ".join(dict.fromkeys(r.reason or "known broken (untriaged)" for r in known_broken)))
    if outcomes <= set(SKIPPING):
        pytest.skip("; ".join(dict.fromkeys(f"{r.outcome}: {r.reason}" for r in records)))


def test_registry_coverage(engine_spec: str) -> None:
    """Every name the engine registers is graded or listed with the reason it is not, and the covered share
    is at least the recorded one."""
    module = engine_module(engine_spec)
    loaded = module.load()
    if isinstance(loaded, str):
        pytest.skip(loaded)
    if not loaded.coverage:
        pytest.skip(f"{module.name} has no parser registry")
    record = engine_record(module.module.__file__)
    if record is None:
        pytest.fail(f"{module.name} registers parsers but keeps no {FILE_NAME} beside its adapter", pytrace=False)
    problems = check(module.name, loaded.coverage, record)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
