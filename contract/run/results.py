"""The results file: a record log while the run goes, one JSON file at the end.

The grading process appends each cell's record (and each sample the first time a cell names it) to a
JSON-lines file in the run's own parts folder, flushed per record, so nothing is lost if the run is
stopped. At the end it writes one results file from it (schema in reports/SCHEMA.md, stored by
`write`): the full results path for a complete, unfiltered run, which holds a lock on
it while it runs; `shard-K-of-N.json` beside it for a shard; a file of its own under `filtered/` beside it
for any other run, so a rerun of one cell or a run stopped early never replaces the full results.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ..grading.record import CellRecord
from .schema import compact


def parts_dir(results: Path) -> Path:
    """Where one run's processes log their records: its own folder beside the results file."""
    return results.with_name(f".{results.name}.{os.getpid()}.parts")


def filtered_path(results: Path, label: str = "") -> Path:
    """A results file of its own for a filtered or incomplete run, beside the full results."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return results.parent / "filtered" / f"{stamp}-{os.getpid()}{label}.json"


def shard_path(results: Path, shard: str) -> Path:
    """Where shard `K/N` of a run writes: `shard-K-of-N.json` beside the full results."""
    k, n = shard.split("/")
    return results.with_name(f"shard-{k}-of-{n}.json")


class ResultsBusy(Exception):
    """Another run is writing the same results file."""


class ResultsLock:
    """Held by a run that will write the full results file, for as long as it runs (released on exit)."""

    def __init__(self, results: Path) -> None:
        self.path = results.with_name(results.name + ".lock")
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.seek(0)
            holder = file.read().strip() or "another process"
            file.close()
            raise ResultsBusy(f"{self.path.with_suffix('')}: another grade is writing it ({holder}); wait for it "
                              "to finish, or grade into another --results path") from None
        file.seek(0)
        file.truncate()
        file.write(f"pid {os.getpid()}, started {datetime.now(UTC).isoformat(timespec='seconds')}")
        file.flush()
        self._file = file

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class RecordLog:
    """Appends one JSON line per cell (and per new sample, and the parsers' CPU time at the end) to this
    process's own file."""

    def __init__(self, directory: Path, worker: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{worker}.jsonl"
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, record: CellRecord, samples: dict[str, dict[str, Any]] | None = None) -> None:
        lines = [{"samples": samples}] if samples else []
        lines.append({"cell": record.to_json()})
        self._file.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        self._file.flush()

    def parser_cpu(self, seconds: float) -> None:
        """What the parsers under test spent in this process's workers (a run shared by cells counted once)."""
        self._file.write(json.dumps({"parser_cpu_s": seconds}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def remove_parts(directory: Path) -> None:
    if directory.exists():
        for part in directory.glob("*.jsonl"):
            part.unlink()
        directory.rmdir()


@dataclass
class Parts:
    """What a run's processes logged."""

    cells: list[CellRecord] = field(default_factory=list)
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)
    parser_cpu_s: float = 0.0


def read_parts(directory: Path) -> Parts:
    parts = Parts()
    for part in sorted(directory.glob("*.jsonl")):
        # split on "\n" only: model text may hold U+2028 and friends, which splitlines() breaks on
        for n, line in enumerate(part.read_text(encoding="utf-8").split("\n")):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if "cell" in entry:
                    parts.cells.append(CellRecord.from_own_json(entry["cell"]))
                elif "samples" in entry:
                    parts.samples.update(entry["samples"])
                else:
                    parts.parser_cpu_s += entry["parser_cpu_s"]
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{part}: line {n + 1} is not a JSON record: {exc}") from exc
    return parts


def write(results: Path, document: dict[str, Any]) -> None:
    """A document (its run a `RunRecord`, its cells `CellRecord`s) stored as the current schema has it (`contract.run.schema.compact`), by
    atomic replace, so a reader never sees half a file (`reports.load.load_results` reads it back)."""
    results.parent.mkdir(parents=True, exist_ok=True)
    temporary = results.with_name(f".{results.name}.{os.getpid()}.tmp")
    stored = compact({**document, "run": document["run"].to_json(), "cells": [cell.to_json() for cell in document["cells"]]})
    temporary.write_text(json.dumps(stored, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    temporary.replace(results)
