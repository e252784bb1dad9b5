"""Several results files (one per engine's run) read as one: rows side by side in one matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.load import load_results


def merge_results(documents: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """One document: parsers and cells of every run, the engines of every run, the catalog they share.

    `run` is the first run's metadata with the engines of all runs and a `runs` list keeping each
    run's own; two runs of the same engine or from different case catalogs cannot be merged.
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
        "run": {
            **first["run"],
            "duration_s": round(sum(d["run"]["duration_s"] for d in documents), 2),
            "engines": engines,
            "runs": [d["run"] for d in documents],
        },
        "parsers": [p for d in documents for p in d["parsers"]],
        "cells": [c for d in documents for c in d["cells"]],
    }


def load_merged(paths: list[Path]) -> dict[str, Any]:
    """Load and validate each file, then merge; ValueError names the file at fault."""
    return merge_results([load_results(p) for p in paths], [str(p) for p in paths])
