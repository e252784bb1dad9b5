"""The coverage ratchet (`contract/grading/coverage_record.py`): each engine's record of what it grades, and the
check a grade runs against the live registry (`tests/test_matrix.py::test_registry_coverage`)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from contract.grading.coverage_record import FILE_NAME, CoverageRecordError, check, engine_record, read_record
from contract.grading.engines import ENGINES
from contract.grading.pipeline import KINDS, Coverage

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_ENGINES = ("vllm", "sglang", "lmdeploy", "vllm-mlx", "dynamo", "transformers")


def _record_text(body: str, registered: int, covered: int) -> str:
    return f"registered = {registered}\ncovered = {covered}\n{body}"


def _record(tmp_path: Path, body: str, registered: int, covered: int):
    path = tmp_path / FILE_NAME
    path.write_text(_record_text(body, registered, covered), encoding="utf-8")
    return read_record(path)


NOT_GRADED = '[[not_graded]]\nreason = "no family yet"\ntool = ["apertus"]\n'
LIVE = (Coverage("tool", "hermes", ("hermes",)), Coverage("tool", "qwen", ("hermes",), alias_of="hermes"),
        Coverage("tool", "apertus", ()), Coverage("reasoning", "qwen3", ("hermes",)))


def test_a_registry_that_matches_its_record_passes(tmp_path: Path) -> None:
    assert check("vllm", LIVE, _record(tmp_path, NOT_GRADED, 4, 3)) == []


def test_a_registered_name_neither_graded_nor_listed_fails(tmp_path: Path) -> None:
    live = (*LIVE, Coverage("reasoning", "mimo", ()))
    problems = check("vllm", live, _record(tmp_path, NOT_GRADED, 4, 3))
    assert any("reasoning parser 'mimo' is registered but neither graded nor listed" in p for p in problems)


def test_a_dropped_pipeline_fails_as_unlisted_and_below_the_recorded_share(tmp_path: Path) -> None:
    live = (*LIVE[:3], Coverage("reasoning", "qwen3", ()))
    problems = check("vllm", live, _record(tmp_path, NOT_GRADED, 4, 3))
    assert any("reasoning parser 'qwen3' is registered but neither graded nor listed" in p for p in problems)
    assert any("covers 2 of 4 registered names (50%), below the 3 of 4 (75%)" in p for p in problems)


def test_a_listed_name_that_is_graded_or_unregistered_fails(tmp_path: Path) -> None:
    body = '[[not_graded]]\nreason = "no family yet"\ntool = ["hermes", "gone"]\n'
    problems = check("vllm", LIVE, _record(tmp_path, body, 3, 1))
    assert any("'hermes' is graded (hermes) but" in p and "lists it as not graded" in p for p in problems)
    assert any("lists tool parser 'gone', which vllm does not register" in p for p in problems)


def test_a_better_share_must_be_recorded(tmp_path: Path) -> None:
    """The ratchet moves only when the record does: a gain left unrecorded fails until it is written down."""
    live = (*LIVE, Coverage("tool", "qwen25", ("hermes",), alias_of="hermes"))  # a release adds an alias
    assert check("vllm", live, _record(tmp_path, NOT_GRADED, 4, 3)) == [
        f"vllm covers 4 of 5 registered names: record it in {tmp_path / FILE_NAME} (covered = 4, registered = 5; "
        "it says 3 of 4)"]


@pytest.mark.parametrize(("text", "message"), [
    ("registered = 2\ncovered = 1\n", "covered (1) + names not graded (0) must equal registered (2)"),
    ("registered = 1\ncovered = true\n", "key 'covered': expected a count"),
    ("registered = 1\ncovered = 0\n[[not_graded]]\nreason = ''\ntool = ['x']\n", "not_graded[0]: key 'reason'"),
    ("registered = 2\ncovered = 0\n[[not_graded]]\nreason = 'r'\ntool = ['x', 'x']\n", "tool name 'x' is listed twice"),
    ("registered = 1\ncovered = 0\nfloor = 3\n", "unknown key 'floor'"),
    ("registered = 1\ncovered = 0\n[[not_graded]]\nreason = 'r'\ntools = ['x']\n", "expected keys reason, tool"),
])
def test_a_bad_record_is_one_line_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CoverageRecordError) as raised:
        read_record(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("engine", REGISTRY_ENGINES)
def test_every_engine_with_a_registry_keeps_a_record_that_names_no_graded_parser(engine: str) -> None:
    """Checked here without the engine: no name a pipeline grades is listed as not graded."""
    module = importlib.import_module(ENGINES[engine].module)
    record = engine_record(module.__file__)
    assert record is not None, f"parsers/{ENGINES[engine].package}/{FILE_NAME}"
    graded = {(kind, name) for pipeline in module.PIPELINES.values() for kind in KINDS for name in pipeline.names(kind)}
    assert not graded & set(record.not_graded), sorted(graded & set(record.not_graded))
    assert all(not re.search(r"\b(bursts-\d|chars|batch)\b", reason) for reason in record.not_graded.values())


def test_no_engine_without_a_registry_keeps_a_record() -> None:
    for name, entry in ENGINES.items():
        if name not in REGISTRY_ENGINES:
            assert not (ROOT / "parsers" / entry.package / FILE_NAME).exists(), name


def test_readme_engine_table_shows_each_recorded_share() -> None:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Engines\n", 1)[1].split("\n## ", 1)[0]
    for engine in REGISTRY_ENGINES:
        entry = ENGINES[engine]
        record = engine_record(importlib.import_module(entry.module).__file__)
        row = next(line for line in section.splitlines() if line.startswith(f"| {entry.title} {entry.version} |"))
        shown = f"{record.covered} of {record.registered} ({record.share:.0%})"
        assert row.rstrip().endswith(f"| {shown} |"), (engine, shown, row[-60:])


def test_readme_states_the_pooled_share_of_the_records() -> None:
    records = [engine_record(importlib.import_module(ENGINES[e].module).__file__) for e in REGISTRY_ENGINES]
    covered, registered = sum(r.covered for r in records), sum(r.registered for r in records)
    line = f"All engines pooled: {covered} of {registered} registered names covered ({covered / registered:.0%})."
    assert line in (ROOT / "README.md").read_text(encoding="utf-8"), line
