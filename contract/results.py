"""The results file: per-process record logs while the run goes, one merged JSON file at the end.

Every process (the single pytest process, or each xdist worker) appends its cell records to its own
JSON-lines file, flushed per record, so no worker clobbers another and nothing is lost if one dies.
The controlling process merges them into `results.json` (schema in reports/SCHEMA.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SCHEMA = 1
FAILS_RUN = ("fail", "fixed", "changed", "unimplemented", "error", "timeout")


def parts_dir(results: Path) -> Path:
    return results.with_name(results.name + ".parts")


class RecordLog:
    """Appends one JSON line per cell to this process's own file."""

    def __init__(self, results: Path, worker: str) -> None:
        directory = parts_dir(results)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{worker}.jsonl"
        self._file = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def reset(results: Path) -> None:
    directory = parts_dir(results)
    if directory.exists():
        for part in directory.glob("*.jsonl"):
            part.unlink()


def read_parts(results: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for part in sorted(parts_dir(results).glob("*.jsonl")):
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
