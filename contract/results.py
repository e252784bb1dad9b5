"""The results file: per-process record logs while the run goes, one merged JSON file at the end.

Every process (the single pytest process, or each xdist worker) appends its cell records to its own
JSON-lines file in the run's own parts folder, flushed per record, so no worker clobbers another and
nothing is lost if one dies. The controlling process merges them into one results file (schema in
reports/SCHEMA.md): the full results path for a complete, unfiltered run, which holds a lock on it
while it runs; a file of its own under `filtered/` beside it for any other run, so a rerun of one cell
or a run stopped early never replaces the full results.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

SCHEMA = 1
FAILS_RUN = ("fail", "fixed", "changed", "unimplemented", "error", "timeout")


def parts_dir(results: Path) -> Path:
    """Where one run's processes log their records: its own folder beside the results file."""
    return results.with_name(f".{results.name}.{os.getpid()}.parts")


def filtered_path(results: Path, label: str = "") -> Path:
    """A results file of its own for a filtered or incomplete run, beside the full results."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return results.parent / "filtered" / f"{stamp}-{os.getpid()}{label}.json"


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
    """Appends one JSON line per cell to this process's own file."""

    def __init__(self, directory: Path, worker: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{worker}.jsonl"
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def remove_parts(directory: Path) -> None:
    if directory.exists():
        for part in directory.glob("*.jsonl"):
            part.unlink()
        directory.rmdir()


def read_parts(directory: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for part in sorted(directory.glob("*.jsonl")):
        # split on "\n" only: model text may hold U+2028 and friends, which splitlines() breaks on
        for n, line in enumerate(part.read_text(encoding="utf-8").split("\n")):
            if not line.strip():
                continue
            try:
                cells.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{part}: line {n + 1} is not a JSON record: {exc}") from exc
    return cells


def write(results: Path, document: dict[str, Any]) -> None:
    """Atomic replace, so a reader never sees half a file."""
    results.parent.mkdir(parents=True, exist_ok=True)
    temporary = results.with_name(f".{results.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    temporary.replace(results)
