"""Per-process record logs, their merge, the atomic results file, the lock on it, and the run's receipt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.grading.outcome import Outcome
from contract.grading.record import CellRecord
from contract.run import results
from contract.run.receipt import Receipt
from contract.run.record import EngineRun, RunRecord
from reports.load import load_results


def _record(worker: str, n: int, text: str) -> CellRecord:
    return CellRecord(engine=worker, parser=f"{worker}/p", family=None, case="tool.single", kind="tool", mode="batch",
                      tier="batch", vocabulary=None, outcome=Outcome.FAIL, examples=n, reason=text)


def _records(worker: str, count: int) -> list[CellRecord]:
    return [_record(worker, n, f"café 東京 {n}\n<tool_call>") for n in range(count)]


def _write(path: Path, worker: str, records: list[CellRecord]) -> None:
    log = results.RecordLog(results.parts_dir(path), worker)
    for record in records:
        log.write(record)
    log.close()


def _key(record: CellRecord) -> tuple[str, int]:
    return record.engine, record.examples or 0


def test_two_workers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    parts = results.parts_dir(path)
    first, second = results.RecordLog(parts, "gw0"), results.RecordLog(parts, "gw1")
    a, b = _records("gw0", 20), _records("gw1", 20)
    for x, y in zip(a, b, strict=True):
        first.write(x)
        second.write(y)
    first.close()
    second.close()
    assert sorted(results.read_parts(results.parts_dir(path)).cells, key=_key) == sorted(a + b, key=_key)


def test_a_reopened_log_appends(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    _write(path, "main", _records("main", 2))
    _write(path, "main", _records("again", 1))
    assert len(results.read_parts(results.parts_dir(path)).cells) == 3


def test_records_with_unicode_line_separators_survive(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    records = [_record("main", 0, "a\u2028b"), _record("main", 1, "c\x85d")]
    _write(path, "main", records)
    assert results.read_parts(results.parts_dir(path)).cells == records


def test_parts_are_the_runs_own_and_removed_after(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    assert results.parts_dir(path) != path.with_name("results.json.parts")  # per process, not shared
    _write(path, "gw0", _records("gw0", 3))
    _write(path, "gw1", _records("gw1", 3))
    results.remove_parts(results.parts_dir(path))
    assert list(tmp_path.iterdir()) == []
    results.remove_parts(results.parts_dir(path))  # harmless when already gone


def test_the_lock_refuses_a_second_holder_and_frees_on_release(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    first, second = results.ResultsLock(path), results.ResultsLock(path)
    first.acquire()
    with pytest.raises(results.ResultsBusy, match=r"another grade is writing it \(pid \d+, started "):
        second.acquire()
    first.release()
    second.acquire()
    second.release()


def test_filtered_results_go_beside_the_full_ones(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    own = results.filtered_path(path, "-incomplete")
    assert own.parent == tmp_path / "filtered" and own.name.endswith("-incomplete.json")


def test_samples_and_parser_time_are_logged_beside_the_cells(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    log = results.RecordLog(results.parts_dir(path), "main")
    log.write(_records("main", 1)[0], {"hermes:tool.single": {"text": "a"}})
    log.write(_records("main", 2)[1], {})
    log.parser_cpu(1.5)
    log.close()
    parts = results.read_parts(results.parts_dir(path))
    assert parts.cells == _records("main", 2) and parts.samples == {"hermes:tool.single": {"text": "a"}}
    assert parts.parser_cpu_s == 1.5


def test_write_is_atomic_and_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "results.json"
    path.parent.mkdir()
    path.write_text("stale", encoding="utf-8")
    cell = _record("p", 0, "café 東京")
    run = RunRecord(started="2026-01-01T00:00:00+00:00", duration_s=1.5, commit=None, hypothesis_profile="ci",
                    vocabulary="real", workers=2, engines={"p": EngineRun(version="1", rerun="pytest {parser}")})
    document = {"schema": 3, "run": run, "parsers": [{"engine": "p", "parser": "p/p", "family": None}],
                "cases": [{"id": "tool.single", "kind": "tool", "title": "t"}], "families": [], "samples": {},
                "cells": [cell]}
    results.write(path, document)
    [stored] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert (stored["parser"], stored["outcome"]) == ("p/p", "fail") and "café 東京" in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]
    assert load_results(path)["run"] == run  # the run reads back as it was written


@pytest.mark.parametrize(("line", "message"), [
    ('{"cell": {"parser": \n', r"gw3\.jsonl: line 3 is not a JSON record"),
    ('{"cell": {"parser": "gw3/p"}}\n', r"gw3\.jsonl: line 3 is not a JSON record: 'outcome'"),
])
def test_corrupt_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "results.json"
    _write(path, "gw3", _records("gw3", 2))
    part = results.parts_dir(path) / "gw3.jsonl"
    with part.open("a", encoding="utf-8") as f:
        f.write(line)
    with pytest.raises(ValueError, match=message):
        results.read_parts(results.parts_dir(path))


@pytest.mark.parametrize("complete", [True, False])
def test_a_receipt_reads_back_as_written(tmp_path: Path, complete: bool) -> None:
    written = Receipt(tmp_path / "out" / "results.json", complete)
    written.write(tmp_path / "tmp" / "receipt.json")
    assert Receipt.read(tmp_path / "tmp" / "receipt.json") == written
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == ["receipt.json"]  # no partial file left


def test_no_receipt_means_no_results_written(tmp_path: Path) -> None:
    assert Receipt.read(tmp_path / "receipt.json") is None


@pytest.mark.parametrize("text", ["", "[]", '{"results": "r.json"}', '{"results": "r.json", "complete": "yes"}'])
def test_a_file_that_is_not_a_receipt_is_named(tmp_path: Path, text: str) -> None:
    path = tmp_path / "receipt.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: not a grade run's receipt"):
        Receipt.read(path)
