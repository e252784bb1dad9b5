"""Per-process record logs, their merge, and the atomic results file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contract import results


def _records(worker: str, count: int) -> list[dict[str, Any]]:
    return [{"worker": worker, "n": n, "text": f"café 東京 {n}\n<tool_call>"} for n in range(count)]


def _write(path: Path, worker: str, records: list[dict[str, Any]]) -> None:
    log = results.RecordLog(path, worker)
    for record in records:
        log.write(record)
    log.close()


def _key(record: dict[str, Any]) -> tuple[str, int]:
    return record["worker"], record["n"]


def test_two_workers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    first, second = results.RecordLog(path, "gw0"), results.RecordLog(path, "gw1")
    a, b = _records("gw0", 20), _records("gw1", 20)
    for x, y in zip(a, b, strict=True):
        first.write(x)
        second.write(y)
    first.close()
    second.close()
    assert sorted(results.read_parts(path), key=_key) == sorted(a + b, key=_key)


def test_a_reopened_log_appends(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    _write(path, "main", _records("main", 2))
    _write(path, "main", _records("again", 1))
    assert len(results.read_parts(path)) == 3


def test_records_with_unicode_line_separators_survive(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    records = [{"worker": "main", "n": 0, "text": "a\u2028b"}, {"worker": "main", "n": 1, "text": "c\x85d"}]
    _write(path, "main", records)
    assert results.read_parts(path) == records


def test_reset_removes_parts(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    _write(path, "gw0", _records("gw0", 3))
    _write(path, "gw1", _records("gw1", 3))
    results.reset(path)
    assert list(results.parts_dir(path).glob("*.jsonl")) == []
    assert results.read_parts(path) == []


def test_reset_without_parts_is_harmless(tmp_path: Path) -> None:
    results.reset(tmp_path / "never-written.json")
    assert not results.parts_dir(tmp_path / "never-written.json").exists()


def test_write_is_atomic_and_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "results.json"
    path.parent.mkdir()
    path.write_text("stale", encoding="utf-8")
    document = {"schema": results.SCHEMA, "cells": _records("main", 3)}
    results.write(path, document)
    assert json.loads(path.read_text(encoding="utf-8")) == document
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]


def test_corrupt_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    _write(path, "gw3", _records("gw3", 2))
    part = results.parts_dir(path) / "gw3.jsonl"
    with part.open("a", encoding="utf-8") as f:
        f.write('{"worker": "gw3", "n": \n')
    with pytest.raises(ValueError, match=r"gw3\.jsonl: line 3 "):
        results.read_parts(path)
