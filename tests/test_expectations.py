"""KnownBroken end to end: update-expectations writes untriaged entries, a still-broken cell is xfail,
a passing one is `fixed`, a different failure is `changed` with its diff; plus file errors,
Unimplemented and skip."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from grading_run import ROOT, Run, grade

from contract import expectations

PARSER = "miniature/rewrites_native_ids"
SELECT = ("--engine", "tests.miniatures", "--case", "tool.native_id", "--case", "tool.single",
          "--mode", "batch", "--mode", "tokens", "-k", "rewrites_native_ids")


def _update(results: Path, directory: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "contract.expectations", str(results), "--dir", str(directory)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def _outcomes(run: Run) -> dict[tuple[str, str], str]:
    return {(c["case"], c["mode"]): c["outcome"] for c in run.cells(parser=PARSER)}


def test_known_broken_lifecycle(tmp_path: Path) -> None:
    directory = tmp_path / "expectations"
    first = grade(tmp_path / "1", *SELECT, expectations=directory)
    assert first.returncode == 1
    assert _outcomes(first) == {("tool.native_id", "batch"): "fail", ("tool.native_id", "tokens"): "fail",
                                ("tool.single", "batch"): "pass", ("tool.single", "tokens"): "pass"}

    assert "2 added (untriaged)" in _update(tmp_path / "1" / "results.json", directory)
    entries = expectations.load(directory / "miniature.toml")
    assert set(entries) == {(PARSER, "tool.native_id", "batch"), (PARSER, "tool.native_id", "tokens")}
    assert all(e.untriaged and e.observed for e in entries.values())

    second = grade(tmp_path / "2", *SELECT, expectations=directory)
    assert second.returncode == 0, second.output[-2000:]
    assert _outcomes(second)[("tool.native_id", "batch")] == "xfail"
    assert all(c["untriaged"] for c in second.cells(parser=PARSER, outcome="xfail"))

    # triage one entry, tamper with the other's recorded behaviour, and claim a passing cell is broken
    text = (directory / "miniature.toml").read_text(encoding="utf-8")
    text = text.replace('reason = ""', 'reason = "strips punctuation from native ids"', 1)
    text = text.replace("functionsget_weather2", "functions_get_weather_2", 1)
    text += (f'\n[[known_broken]]\nparser = "{PARSER}"\ncase = "tool.single"\nmode = "batch"\n'
             'reason = "believed broken"\n')
    (directory / "miniature.toml").write_text(text, encoding="utf-8")

    third = grade(tmp_path / "3", *SELECT, expectations=directory)
    assert third.returncode == 1
    outcomes = _outcomes(third)
    assert outcomes[("tool.single", "batch")] == "fixed"
    assert sorted(outcomes[("tool.native_id", m)] for m in ("batch", "tokens")) == ["changed", "xfail"]
    changed = next(c for c in third.cells(parser=PARSER, outcome="changed"))
    assert "functions_get_weather_2" in changed["diff"] and "functionsget_weather2" in changed["diff"]

    assert "1 refreshed, 1 removed" in _update(tmp_path / "3" / "results.json", directory)
    refreshed = expectations.load(directory / "miniature.toml")
    assert (PARSER, "tool.single", "batch") not in refreshed
    assert {e.reason for e in refreshed.values()} == {"strips punctuation from native ids", ""}
    assert grade(tmp_path / "4", *SELECT, expectations=directory).returncode == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[[known_broken]]\nparser = 'p'\ncase = 'c'\nmode = 'batch'\n", "field 'reason' missing"),
        ("[[known_broken]]\nparser = 'p'\ncase = 'c'\nmode = 'batch'\nreason = 'r'\nobserved = '{x'\n",
         "field 'observed' is not JSON"),
        ("known_broken = [", "not valid TOML"),
    ],
)
def test_bad_expectation_file_names_file_entry_and_field(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "engine.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(expectations.ExpectationError) as error:
        expectations.load(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_unmapped_parsers_are_unimplemented_and_fail_the_run(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.unmapped", "--mode", "batch")
    assert run.returncode == 1
    outcomes = {(c["parser"], c["outcome"]) for c in run.results["cells"]}
    assert outcomes == {("unmapped/mystery_parser", "unimplemented"), ("unmapped/future_format", "unimplemented")}
    assert all(c["reason"] for c in run.results["cells"])


def test_missing_engine_is_skip_not_failure(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.absent", "--case", "tool.single", "--case", "tool.entities")
    assert run.returncode == 0, run.output[-2000:]
    assert {c["outcome"] for c in run.cells(case="tool.single")} == {"skip"}
    assert {c["outcome"] for c in run.cells(case="tool.entities")} == {"n/a"}
    engine = run.results["run"]["engines"]["absent"]
    assert engine["available"] is False and "engine_that_is_not_installed" in engine["skip_reason"]
    assert json.dumps(run.results)  # the document is plain JSON


def test_rerun_command_grades_just_that_cell(tmp_path: Path) -> None:
    first = grade(tmp_path / "all", "--engine", "tests.miniatures", "--case", "tool.native_id", "--mode", "tokens")
    cell = first.cells(parser=PARSER)[0]
    command = shlex.split(cell["rerun"])
    assert command[:4] == ["nox", "-s", "grade", "--"]
    again = subprocess.run([sys.executable, "-m", "pytest", "--grade", "-q", "--no-html",
                            "--results", str(tmp_path / "one.json"), "--expectations", str(tmp_path), *command[4:]],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    cells = json.loads((tmp_path / "one.json").read_text(encoding="utf-8"))["cells"]
    assert [(c["parser"], c["case"], c["mode"]) for c in cells] == [(PARSER, "tool.native_id", "tokens")], again.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--family", "no_such_family"), "--family no_such_family: known families are"),
        (("--mode", "sometimes"), "unknown mode 'sometimes'"),
        (("--engine", "no.such.module"), "cannot import adapter module 'no.such.module'"),
        (("--expectations", "{broken}"), "field 'reason' missing"),
    ],
)
def test_bad_options_stop_the_run_with_a_clear_error(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "reference.toml").write_text("[[known_broken]]\nparser = 'p'\ncase = 'c'\nmode = 'batch'\n")
    args = tuple(a.replace("{broken}", str(broken)) for a in args)
    done = subprocess.run([sys.executable, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q",
                           "--results", str(tmp_path / "r.json"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stdout[-1500:] + done.stderr[-1500:]  # pytest's usage error
    assert message in done.stderr, done.stderr[-1500:]
