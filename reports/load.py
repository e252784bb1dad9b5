"""Read and validate a results file (schema 1, 2 or 3, see reports/SCHEMA.md) with its cells whole (the
writer is `contract.run.results.write`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contract.grading.outcome import FAILS_RUN as RUN_FAILING
from contract.grading.outcome import OUTCOMES
from contract.grading.record import CellRecord, RecordError
from contract.run.record import RunRecord
from contract.run.schema import READABLE, SHARED, expand

__all__ = ["MODES", "OUTCOMES", "RESPONSES_MODES", "RUN_FAILING", "load_results"]
MODES = (
    "batch",
    "whole",
    "tokens",
    "bursts-2",
    "bursts-3",
    "bursts-5",
    "bursts-8",
    "boundaries",
    "random",
    "chars",
    "concurrent",
    "responses",
    "responses-tokens",
)
RESPONSES_MODES = ("responses", "responses-tokens")  # the Responses API's: its own column, apart from chat's scores

_TOP_LEVEL: dict[str, type] = {"run": dict, "parsers": list, "cases": list, "families": list, "cells": list}
_ROW_KEYS = {
    "parsers": ("engine", "parser", "family"),
    "cases": ("id", "kind", "title"),
}


def load_results(path: str | Path) -> dict[str, Any]:
    """Load a results file, its run as a `RunRecord` and its cells as `CellRecord`s; raise ValueError naming the
    file and the missing or bad field (for a cell: its index, its id when it has one, and the key)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON results file: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be a JSON object")
    if "schema" not in data:
        raise ValueError(f"{path}: missing field 'schema'")
    if data["schema"] not in READABLE:
        raise ValueError(f"{path}: bad field 'schema': {data['schema']!r}, this reader supports "
                         f"{' and '.join(map(str, READABLE))}")
    if data["schema"] >= 2:
        for key, kind in (("samples", dict), ("values", list)):
            if not isinstance(data.get(key), kind):
                raise ValueError(f"{path}: missing field {key!r}")
    for key, kind in _TOP_LEVEL.items():
        if key not in data:
            raise ValueError(f"{path}: missing field {key!r}")
        if not isinstance(data[key], kind):
            raise ValueError(
                f"{path}: bad field {key!r}: expected a JSON {'object' if kind is dict else 'array'}"
            )
    try:
        run = RunRecord.from_json(data["run"])
    except RecordError as exc:
        raise ValueError(f"{path}: bad field 'run': {exc}") from None
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict):
            raise ValueError(f"{path}: bad field 'cells[{index}]': expected a JSON object")
        if data["schema"] < 2:
            continue
        if cell.get("sample") is not None and cell["sample"] not in data["samples"]:
            raise ValueError(f"{path}: bad field 'cells[{index}].sample': {cell['sample']!r} is not in 'samples'")
        for key in SHARED:
            if key in cell and not (isinstance(cell[key], int) and 0 <= cell[key] < len(data["values"])):
                raise ValueError(f"{path}: bad field 'cells[{index}].{key}': {cell[key]!r} is not an index of 'values'")
    try:
        data = expand(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    for section, keys in _ROW_KEYS.items():
        for index, row in enumerate(data[section]):
            where = f"{section}[{index}]"
            if not isinstance(row, dict):
                raise ValueError(f"{path}: bad field {where!r}: expected a JSON object")
            for key in keys:
                if key not in row:
                    raise ValueError(f"{path}: missing field '{where}.{key}'")
    return {**data, "run": run, "cells": [_record(path, index, cell) for index, cell in enumerate(data["cells"])]}


def _record(path: Path, index: int, cell: dict[str, Any]) -> CellRecord:
    try:
        return CellRecord.from_json(cell)
    except RecordError as exc:
        named = ":".join(str(cell.get(key)) for key in ("parser", "case", "mode")) if "parser" in cell else ""
        raise ValueError(f"{path}: bad field 'cells[{index}]'{f' ({named})' if named else ''}: {exc}") from None
