"""The matrix's own workflow of docs/ci.md, every `run:` step as written: one job per engine (and shard), then
the job that joins their artifacts into the combined matrix and gates it.

The reference engine stands for every engine: its grade job runs twice, as shards 1/2 and 2/2, each in a
workspace of its own; the report job then takes what they uploaded, with a baseline that is the reference
graded whole. The joined results must be the whole run's, cell for cell and in the same order, and the gate
must find nothing changed. The steps that are GitHub actions (`uses:`) are stood in for: checkout is this
project, setup-python this interpreter, artifacts are folders.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from workflow import expand, run_step, workflow

from contract.grading.adapter import BUILTIN_ENGINES
from reports.load import load_results

NAME = "conformance matrix"
ENGINE, SHARDS = "reference", ("1/2", "2/2")
STOOD_IN = {"actions/checkout@v4", "actions/setup-python@v5", "actions/upload-artifact@v4",
            "actions/download-artifact@v4", "dawidd6/action-download-artifact@v6"}
TIMING = ("duration_s", "parse_cpu_s", "reference_cpu_s", "slowdown")  # load-dependent figures, never verdicts


def _job_env(job: dict[str, Any], workspace: Path) -> dict[str, str]:
    return {k: str(v).replace("${{ github.workspace }}", str(workspace)) for k, v in job.get("env", {}).items()}


def _upload(step: dict[str, Any], values: dict[str, str], workspace: Path, artifacts: Path) -> None:
    """actions/upload-artifact: a folder, or the files a glob matches (flat, as v4 stores them), by name."""
    name, pattern = expand(step["with"]["name"], values), expand(step["with"]["path"], values)
    if (workspace / pattern).is_dir():
        shutil.copytree(workspace / pattern, artifacts / name)
        return
    found = [p for p in workspace.rglob("*") if p.is_file() and fnmatch.fnmatch(str(p.relative_to(workspace)), pattern)]
    assert found, f"{step['name']}: nothing matches {pattern}"
    for path in found:
        (artifacts / name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, artifacts / name / path.name)


def _run_job(job: dict[str, Any], values: dict[str, str], workspace: Path, artifacts: Path,
             baseline: Path | None = None) -> dict[str, int]:
    """Every step of a job in order: `run:` steps as written, actions by their stand-ins; the exit of each run."""
    assert {s["uses"] for s in job["steps"] if "uses" in s} <= STOOD_IN, "a new action in the workflow needs a stand-in"
    env = _job_env(job, workspace)
    exits: dict[str, int] = {}
    for step in job["steps"]:
        uses = step.get("uses", "")
        if "run" in step:
            exits[step["name"]] = run_step(step, env, workspace, values=values).returncode
        elif uses.startswith("actions/upload-artifact"):
            _upload(step, values, workspace, artifacts)
        elif uses.startswith("actions/download-artifact"):
            for folder in artifacts.iterdir():
                if fnmatch.fnmatch(folder.name, step["with"]["pattern"]):
                    shutil.copytree(folder, workspace / step["with"]["path"] / folder.name)
        elif uses.startswith("dawidd6/action-download-artifact") and baseline is not None:
            shutil.copytree(baseline, workspace / step["with"]["path"])
    return exits


def _verdicts(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in cell.to_json().items() if k not in TIMING} for cell in document["cells"]]


def test_the_matrix_workflow_grades_every_engine() -> None:
    matrix = workflow(NAME)["jobs"]["grade"]["strategy"]["matrix"]
    jobs = [(e, s) for e in matrix["engine"] for s in matrix["shard"]] + [(i["engine"], i["shard"]) for i in
                                                                          matrix.get("include", [])]
    assert {engine for engine, _ in jobs} == set(BUILTIN_ENGINES)
    for engine in BUILTIN_ENGINES:  # each engine's shards are 1..N of one N
        shards = sorted(s for e, s in jobs if e == engine)
        n = int(shards[0].split("/")[1])
        assert shards == [f"{k}/{n}" for k in range(1, n + 1)], (engine, shards)


@pytest.mark.slow
def test_sharded_jobs_join_into_the_whole_run_and_gate_clean(tmp_path: Path) -> None:
    jobs = workflow(NAME)["jobs"]
    artifacts = tmp_path / "artifacts"
    grade = jobs["grade"]

    whole_workspace = tmp_path / "whole"
    exits = _run_job(grade, {"matrix.engine": ENGINE, "matrix.shard": "1/1", "strategy.job-index": "whole"},
                     whole_workspace, tmp_path / "unused")
    assert set(exits.values()) == {0}, exits
    assert (whole_workspace / "out" / "matrix.html").exists()  # a whole grade ends with the combined report
    whole = load_results(whole_workspace / "out" / ENGINE / "results.json")
    baseline = tmp_path / "main-matrix"
    (baseline / ENGINE).mkdir(parents=True)
    shutil.copy(whole_workspace / "out" / ENGINE / "results.json", baseline / ENGINE / "results.json")

    for index, shard in enumerate(SHARDS):
        workspace = tmp_path / f"job-{index}"
        exits = _run_job(grade, {"matrix.engine": ENGINE, "matrix.shard": shard, "strategy.job-index": str(index)},
                         workspace, artifacts)
        assert set(exits.values()) == {0}, exits
        assert not (workspace / "out" / "matrix.html").exists()  # a shard's grade leaves the report to the report job
    assert sorted(p.name for p in (artifacts).rglob("*.json")) == ["shard-1-of-2.json", "shard-2-of-2.json"]

    report = tmp_path / "report"
    exits = _run_job(jobs["report"], {}, report, artifacts, baseline)
    assert set(exits.values()) == {0}, exits
    joined = load_results(report / "out" / ENGINE / "results.json")
    assert len(joined["run"].shards) == 2 and joined["run"].shard is None
    assert _verdicts(joined) == _verdicts(whole)  # the same cells, in the same order
    assert joined["samples"] == whole["samples"] and joined["parsers"] == whole["parsers"]
    gate = json.loads((report / "out" / "gate.json").read_text(encoding="utf-8"))
    assert gate["regressed"] is False and gate["transitions"] == []
    assert (report / "out" / "matrix.html").exists() and (report / "out" / "summary.md").exists()
