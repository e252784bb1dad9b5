"""The results document a grade run writes at its end (reports/SCHEMA.md): its run record, the parsers, cases,
families and samples its cells name, and the cells. Built from the run's settings and what its processes
logged; `contract.run.results.write` stores it.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import expectations
from ..cases.catalog import CATALOG
from ..cases.family import Family, NotApplicable, Unimplemented
from ..grading.adapter import engine_module
from ..grading.cell import Cell
from ..grading.coverage_record import engine_record, with_reasons
from ..grading.record import CellRecord
from ..streams.tokenizer import vocabulary_label
from .provenance import head_commit, installed_build
from .record import CitedBug, EngineRun, RunRecord
from .results import Parts
from .schema import SCHEMA
from .settings import ROOT, RunSettings


def engine_runs(settings: RunSettings, cells: Sequence[CellRecord], rerun: Callable[[str], str]) -> dict[str, EngineRun]:
    """Each engine of the run as it was graded: version and build (imported only now), its rerun command
    (`rerun(spec)`), its registry's coverage and the KnownBroken bugs its cells cite."""
    engines: dict[str, EngineRun] = {}
    for spec in settings.engines:
        module = engine_module(spec)
        loaded = module.load()
        bugs = cited_bugs(settings.expectations / f"{module.name}.toml", module.name, cells)
        if isinstance(loaded, str):
            engines[module.name] = EngineRun(available=False, rerun=rerun(spec), skip_reason=loaded, bugs=bugs)
        else:
            build = installed_build(loaded.distribution).to_json() if loaded.distribution else None
            record = engine_record(module.module.__file__)
            coverage = with_reasons(loaded.coverage, record.not_graded) if record else loaded.coverage
            engines[module.name] = EngineRun(version=loaded.version, build=build, rerun=rerun(spec),
                                             coverage=coverage, bugs=bugs)
    return engines


def cited_bugs(path: Path, engine: str, cells: Iterable[CellRecord]) -> dict[str, CitedBug]:
    """The KnownBroken bugs of `path` the engine's cells cite, by id, in the file's order."""
    cited = {bug for cell in cells if cell.engine == engine for bug in cell.bugs}
    if not cited:
        return {}
    known = expectations.load(path)
    return {bug.id: CitedBug(bug.reason, bug.link or None, bug.untriaged)
            for bug in known.bugs.values() if bug.id in cited}


def run_record(settings: RunSettings, engines: Mapping[str, EngineRun], *, started: datetime, finished: datetime,
               duration_s: float, workers: int, command: str, seed: str | int | None,
               parser_cpu_s: float) -> RunRecord:
    """The run's record: its settings, what only the running process knows, and where it ran."""
    return RunRecord(
        started=started.isoformat(timespec="seconds"), finished=finished.isoformat(timespec="seconds"),
        duration_s=round(duration_s, 2), commit=head_commit(ROOT), command=command,
        hypothesis_profile=settings.hypothesis_profile, vocabulary=settings.tier, seed=seed, workers=workers,
        cpu_load=settings.cpu_load, shard=settings.shard, parser_cpu_s=round(parser_cpu_s, 3),
        python=sys.version.split()[0], platform=platform.platform(), engines=dict(engines))


def results_document(run: RunRecord, planned: Sequence[Cell], parts: Parts,
                     families: Mapping[str, Family]) -> dict[str, Any]:
    """The whole document; a filtered run lists only the parsers it graded, and only the samples its cells name."""
    graded = {cell.parser for cell in parts.cells}
    parsers: dict[str, dict[str, Any]] = {}
    for cell in planned:
        if cell.parser in graded:
            parsers.setdefault(cell.parser, {"engine": cell.engine_name, "parser": cell.parser,
                                             "family": cell.family, "version": run.engines[cell.engine_name].version})
    named = {cell.sample for cell in parts.cells}
    return {
        "schema": SCHEMA,
        "run": run,
        "parsers": list(parsers.values()),
        "cases": [{"id": c.id, "kind": c.kind, "title": c.title, "expected": c.expected} for c in CATALOG],
        "families": families_table(families),
        "samples": {key: parts.samples[key] for key in sorted(parts.samples) if key in named},
        "cells": parts.cells,
    }


def families_table(families: Mapping[str, Family]) -> list[dict[str, Any]]:
    """Each family, the vocabulary it was graded on, and its position on every case of the catalog."""
    rows = []
    for family in families.values():
        positions = {}
        for c in CATALOG:
            position = family.position(c)
            if isinstance(position, NotApplicable):
                positions[c.id] = {"state": "n/a", "note": position.reason}
            elif isinstance(position, Unimplemented):
                positions[c.id] = {"state": "unimplemented", "note": position.reason}
            else:
                positions[c.id] = {"state": "sample", "note": position.note}
        rows.append({"name": family.name, "title": family.title, "vocabulary": vocabulary_label(family),
                     "positions": positions})
    return rows
