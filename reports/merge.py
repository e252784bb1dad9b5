"""Several results files (one per engine's run) read as one: rows side by side in one matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.load import load_results
from reports.summary import wall_span


def merged_run(runs: list[dict[str, Any]], engines: dict[str, Any]) -> dict[str, Any]:
    """The `run` of a merged document: the first run's settings with the engines of all runs, each run's own
    metadata in `runs`, and wall-clock bounds over all of them.

    `started` is the earliest start, `finished` the latest finish and `duration_s` the span between them
    (not the sum of the runs' durations: runs may overlap or leave gaps); both are None unless every run
    has ISO-8601 `started` and `finished`. `commit` is the runs' common commit, None when they differ.
    """
    span = wall_span(runs)
    commits = {run.get("commit") for run in runs}
    return {
        **runs[0],
        "started": span[0] if span else runs[0]["started"],
        "finished": span[1] if span else None,
        "duration_s": span[2] if span else None,
        "commit": commits.pop() if len(commits) == 1 else None,
        "engines": engines,
        "runs": runs,
    }


def merge_results(documents: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """One document: parsers and cells of every run, the engines of every run, the catalog they share.

    `run` is merged_run's; two runs of the same engine or from different case catalogs cannot be merged.
    """
    names = names or [f"results #{n + 1}" for n in range(len(documents))]
    first = documents[0]
    case_ids = [c["id"] for c in first["cases"]]
    engines: dict[str, Any] = {}
    for name, document in zip(names, documents, strict=True):
        if [c["id"] for c in document["cases"]] != case_ids:
            raise ValueError(f"{name}: its case catalog differs from {names[0]}'s; grade both at the same commit")
        for engine, info in document["run"]["engines"].items():
            if engine in engines:
                raise ValueError(f"{name}: engine {engine!r} is graded in two of the results files")
            engines[engine] = info
    if len(documents) == 1:
        return first
    return {
        **first,
        "run": merged_run([d["run"] for d in documents], engines),
        "parsers": [p for d in documents for p in d["parsers"]],
        "cells": [c for d in documents for c in d["cells"]],
    }


def load_merged(paths: list[Path]) -> dict[str, Any]:
    """Load and validate each file, then merge; ValueError names the file at fault."""
    return merge_results([load_results(p) for p in paths], [str(p) for p in paths])
