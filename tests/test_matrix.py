"""The matrix itself: one test per (parser, case, mode) cell, collected only under `pytest --grade`."""

from __future__ import annotations

import pytest

from contract.isolation import IsolatedGrader
from contract.matrix import Cell, judge
from contract.results import RecordLog

PASSING = ("pass",)
SKIPPING = ("n/a", "skip")


def _explain(record: dict) -> str:
    lines = [f"{record['parser']} {record['case']} {record['mode']}: {record['outcome']}"]
    if record.get("reason"):
        lines.append(f"reason: {record['reason']}")
    lines += [f"- {f['check']}: {f['detail']}" for f in record["failures"][:8]]
    if record.get("chunking"):
        lines.append(f"failing chunking: {record['chunking']!r}"[:2000])
    if record.get("diff"):
        lines.append(record["diff"])
    if record.get("error"):
        lines.append(record["error"])
    lines.append(f"rerun: {record['rerun']}")
    return "\n".join(lines)


def test_cell(cell: Cell, grader: IsolatedGrader, known, other_tier, rerun, record_log: RecordLog) -> None:
    record = judge(grader.grade(cell), known(cell.engine_name), other_tier(cell.engine_name))
    record["rerun"] = rerun(cell)
    record_log.write(record)
    outcome = record["outcome"]
    if outcome in PASSING:
        return
    if outcome in SKIPPING:
        pytest.skip(f"{outcome}: {record['reason']}")
    if outcome == "xfail":
        pytest.xfail(record["reason"] or "known broken (untriaged)")
    pytest.fail(_explain(record), pytrace=False)
