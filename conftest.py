"""Pytest glue for the matrix: options, validation, cell collection, result recording, the summary.

`pytest --grade` collects `tests/test_matrix.py` with one test per cell; without `--grade` that
module is ignored and `pytest` runs the framework's own tests. Parsers run in worker processes
(`contract.isolation`); verdicts against the expectation files are given here, in the pytest process.
A complete unfiltered run writes `--results` (holding a lock on it while it runs); a filtered or
incomplete one writes its own file under `filtered/` beside it.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from contract import expectations
from contract import results as results_file
from contract.adapter import BUILTIN_ENGINES, engine_module
from contract.catalog import CATALOG
from contract.family import NotApplicable, Unimplemented
from contract.isolation import IsolatedGrader, Limits
from contract.matrix import Cell, Grader, parser_names, plan
from contract.profiles import CI, EXAMPLES
from contract.provenance import installed_build
from contract.tokenizer import REAL, SYNTHETIC, TIERS, use_vocabulary, vocabulary_label
from fixtures import all_families, expectations_dir

ROOT = Path(__file__).parent
MATRIX_MODULE = ROOT / "tests" / "test_matrix.py"
CANDIDATE_ENV = "MATRIX_CANDIDATE"  # set by `nox -s candidate`: the build graded, as given there (shell-quoted)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("matrix", "parser conformance matrix")
    group.addoption("--grade", action="store_true", help="grade parsers: collect one test per matrix cell")
    group.addoption("--engine", action="append", default=None,
                    help="engine to grade: 'reference' (default) or an adapter module path; repeatable")
    group.addoption("--family", action="append", default=None, help="only these families; repeatable")
    group.addoption("--mode", action="append", default=None, help="only these modes; repeatable")
    group.addoption("--case", action="append", default=None, help="only these case ids; repeatable")
    group.addoption("--results", default=str(ROOT / "reports" / "out" / "results.json"),
                    help="results file of a complete run; filtered runs write beside it, under filtered/")
    group.addoption("--vocabulary", choices=TIERS, default=REAL,
                    help="tokenize on each family's real vocabulary where it has one (default), or on the "
                         "synthetic BPE for every family")
    group.addoption("--expectations", default=None,
                    help="directory of <engine>.toml files (default: fixtures/expectations for the real "
                         "vocabulary tier, fixtures/expectations/synthetic for the synthetic one)")
    group.addoption("--hang-after", type=float, default=Limits.hang_after,
                    help="CPU seconds one parser call may run without returning before it counts as hung")
    group.addoption("--memory-limit", type=int, default=Limits.memory_limit_mb,
                    help="MiB a parser's worker may grow during one cell before it is stopped")
    group.addoption("--no-html", action="store_true", help="do not write the HTML matrix beside the results")
    group.addoption("--cpu-load", type=int, default=0, metavar="N",
                    help="keep N processes spinning on the CPU while grading: verdicts must not change")


def _profile(config: pytest.Config) -> str:
    """hypothesis's own --hypothesis-profile option picks the random/chars search depth (ci by default)."""
    name = config.getoption("hypothesis_profile", default=None) or CI
    if name not in EXAMPLES:
        raise pytest.UsageError(f"--hypothesis-profile {name!r}: the matrix knows {', '.join(EXAMPLES)}")
    return name


def _grading(config: pytest.Config) -> bool:
    return bool(config.getoption("--grade"))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _results_path(config: pytest.Config) -> Path:
    """The full results path (`--results`)."""
    return Path(config.getoption("--results")).resolve()


def _narrowed(config: pytest.Config) -> bool:
    """The run grades a selection, not the whole matrix of its engines."""
    option = config.option
    return bool(config.getoption("--family") or config.getoption("--mode") or config.getoption("--case")
                or getattr(option, "keyword", "") or getattr(option, "markexpr", "")
                or getattr(option, "deselect", None) or getattr(option, "lf", False)
                or any("::" in arg for arg in config.args))


def _engines(config: pytest.Config) -> list[str]:
    return config.getoption("--engine") or ["reference"]


def _cells(config: pytest.Config) -> list[Cell]:
    return plan(_engines(config), config.getoption("--family"), config.getoption("--mode"),
                config.getoption("--case"))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`--grade` collects only the matrix; without it, only the framework's own tests."""
    if collection_path.suffix != ".py":
        return None
    if _grading(config):
        return collection_path != MATRIX_MODULE
    return collection_path == MATRIX_MODULE or None


def _validate(config: pytest.Config) -> None:
    """Bad options, fixtures or expectation files stop the run at once with one line naming what is wrong."""
    _profile(config)
    try:
        families = all_families()
    except (ValueError, TypeError, KeyError) as exc:
        raise pytest.UsageError(str(exc).strip('"')) from None
    unknown = set(config.getoption("--family") or ()) - set(families)
    if unknown:
        raise pytest.UsageError(f"--family {', '.join(sorted(unknown))}: known families are "
                                f"{', '.join(families)}")
    directory = _expectations(config)
    try:
        for spec in _engines(config):
            module = engine_module(spec)
            expectations.load(directory / f"{module.name}.toml", parser_names(module))
        _cells(config)
    except (ValueError, KeyError) as exc:
        raise pytest.UsageError(str(exc).strip('"')) from None


def _expectations(config: pytest.Config) -> Path:
    given = config.getoption("--expectations")
    return Path(given) if given else expectations_dir(config.getoption("--vocabulary"))


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads the profile and fails with a traceback
def pytest_configure(config: pytest.Config) -> None:
    use_vocabulary(config.getoption("--vocabulary"))
    if not _grading(config) or _is_worker(config):
        return
    _validate(config)
    full = _results_path(config)
    if not _narrowed(config):
        lock = results_file.ResultsLock(full)
        try:
            lock.acquire()
        except results_file.ResultsBusy as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[_LOCK] = lock
    config.stash[_PARTS] = results_file.parts_dir(full)
    config.stash[_LOAD] = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                           for _ in range(config.getoption("--cpu-load"))]
    config.stash[_STARTED] = (datetime.now(UTC), time.perf_counter())


def pytest_configure_node(node: Any) -> None:
    """xdist: every worker of a grading run logs into this run's parts folder."""
    if _PARTS in node.config.stash:
        node.workerinput["matrix_parts"] = str(node.config.stash[_PARTS])


_STARTED = pytest.StashKey[tuple[datetime, float]]()
_PARTS = pytest.StashKey[Path]()  # this run's record logs
_LOCK = pytest.StashKey[results_file.ResultsLock]()  # held by a run that may write the full results
_LOAD = pytest.StashKey[list[subprocess.Popen[bytes]]]()  # --cpu-load spinners
_WRITTEN = pytest.StashKey[Path]()  # the results file this run wrote
_NOTICE = pytest.StashKey[str]()  # why it is not the full results file


def _parts(config: pytest.Config) -> Path:
    if _is_worker(config):
        return Path(config.workerinput["matrix_parts"])  # type: ignore[attr-defined]
    return config.stash[_PARTS]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "cell" in metafunc.fixturenames:
        cells = _cells(metafunc.config) if _grading(metafunc.config) else []
        metafunc.parametrize("cell", cells, ids=[c.id for c in cells])


@pytest.fixture(scope="session")
def grader(pytestconfig: pytest.Config):
    limits = Limits(pytestconfig.getoption("--hang-after"), pytestconfig.getoption("--memory-limit"))
    isolated = IsolatedGrader(_profile(pytestconfig), limits)
    yield isolated
    isolated.close()


@pytest.fixture(scope="session")
def known(pytestconfig: pytest.Config):
    """Each engine's expectations, loaded once per process (validated before the run began)."""
    directory = _expectations(pytestconfig)
    loaded: dict[str, expectations.Expectations] = {}

    def of(engine: str) -> expectations.Expectations:
        if engine not in loaded:
            loaded[engine] = expectations.load(directory / f"{engine}.toml")
        return loaded[engine]

    return of


@pytest.fixture(scope="session")
def other_tier(pytestconfig: pytest.Config):
    """The other vocabulary tier's expectations of an engine (None with --expectations, or without a file):
    they tell which tier a failure needs."""
    tier = SYNTHETIC if pytestconfig.getoption("--vocabulary") == REAL else REAL
    loaded: dict[str, tuple[str, expectations.Expectations] | None] = {}

    def of(engine: str) -> tuple[str, expectations.Expectations] | None:
        if engine not in loaded:
            path = expectations_dir(tier) / f"{engine}.toml"
            custom = pytestconfig.getoption("--expectations")
            loaded[engine] = None if custom or not path.exists() else (tier, expectations.load(path))
        return loaded[engine]

    return of


@pytest.fixture(scope="session")
def record_log(pytestconfig: pytest.Config):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    log = results_file.RecordLog(_parts(pytestconfig), worker)
    yield log
    log.close()


@pytest.fixture(scope="session")
def rerun(pytestconfig: pytest.Config):
    return lambda cell: rerun_command(pytestconfig, cell)


def rerun_command(config: pytest.Config, cell: Cell) -> str:
    """The shell command, run from the project root, that grades just this cell again with the options
    that decide its verdict; builtin engines rerun in their own nox session, reusing its virtualenv."""
    node = shlex.quote(f"tests/test_matrix.py::test_cell[{cell.id}]")
    options: list[str] = []
    profile = _profile(config)
    if profile != CI:
        options += ["--hypothesis-profile", profile]
    tier = config.getoption("--vocabulary")
    if tier != REAL:
        options += ["--vocabulary", tier]
    directory = _expectations(config).resolve()
    if directory != expectations_dir(tier).resolve():
        options += ["--expectations", _shown(directory)]
    for option, default in (("--hang-after", Limits.hang_after), ("--memory-limit", Limits.memory_limit_mb)):
        if config.getoption(option) != default:
            options += [option, str(config.getoption(option))]
    if cell.engine in BUILTIN_ENGINES:
        # builtin engine names need no escaping; a candidate build is named again (nox -R does not reinstall it)
        build = os.environ.get(CANDIDATE_ENV)
        session = f"\"{'candidate' if build else 'grade'}(engine='{cell.engine}')\""
        return " ".join(["nox", "-R", "-s", session, "--", *([build] if build else []), node,
                         *map(shlex.quote, options)])
    return " ".join(["python", "-m", "pytest", "--grade", "--engine", shlex.quote(cell.engine), node,
                     *map(shlex.quote, options)])


def _shown(path: Path) -> str:
    """A path relative to the project root where it is inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _families_json() -> list[dict[str, Any]]:
    rows = []
    for family in all_families().values():
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


def _document(config: pytest.Config, cells: list[dict[str, Any]]) -> dict[str, Any]:
    started, clock = config.stash[_STARTED]
    grader = Grader()
    engines: dict[str, Any] = {}
    parsers: dict[str, dict[str, Any]] = {}
    for spec in _engines(config):
        module = grader.module(spec)
        loaded = grader.engine(spec)
        available = not isinstance(loaded, str)
        version = loaded.version if available else None
        build = installed_build(loaded.distribution).to_json() if available and loaded.distribution else None
        engines[module.name] = {"version": version, "available": available, "build": build,
                                "skip_reason": None if available else loaded,
                                "coverage": [row.to_json() for row in loaded.coverage] if available else []}
    graded = {cell["parser"] for cell in cells}  # a filtered run lists only the parsers it graded
    for cell in _cells(config):
        if cell.parser in graded:
            parsers.setdefault(cell.parser, {"engine": cell.engine_name, "parser": cell.parser,
                                             "family": cell.family, "version": engines[cell.engine_name]["version"]})
    numprocesses = getattr(config.option, "numprocesses", None) or 0
    return {
        "schema": results_file.SCHEMA,
        "run": {
            "started": started.isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - clock, 2),
            "commit": _commit(),
            "command": "pytest " + " ".join(config.invocation_params.args),
            "hypothesis_profile": _profile(config),
            "vocabulary": config.getoption("--vocabulary"),
            "seed": config.getoption("hypothesis_seed", default=None),
            "workers": int(numprocesses) if str(numprocesses).isdigit() else 0,
            "cpu_load": config.getoption("--cpu-load"),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "engines": engines,
        },
        "parsers": list(parsers.values()),
        "cases": [{"id": c.id, "kind": c.kind, "title": c.title, "expected": c.expected} for c in CATALOG],
        "families": _families_json(),
        "cells": cells,
    }


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not _grading(config) or _is_worker(config) or _STARTED not in config.stash:
        return
    for spinner in config.stash.get(_LOAD, []):
        spinner.kill()
        spinner.wait()
    full = _results_path(config)
    cells = results_file.read_parts(config.stash[_PARTS])
    planned = len(_cells(config))
    if _narrowed(config):
        path = results_file.filtered_path(full)
        config.stash[_NOTICE] = f"a filtered run ({len(cells)} cells): its own results file; {full} is untouched"
    elif len(cells) < planned:
        path = results_file.filtered_path(full, "-incomplete")
        config.stash[_NOTICE] = (f"the run stopped after {len(cells)} of {planned} cells: written apart; "
                                 f"{full} is untouched")
    else:
        path = full
    results_file.write(path, _document(config, cells))
    results_file.remove_parts(config.stash[_PARTS])
    if _LOCK in config.stash:
        config.stash[_LOCK].release()
    config.stash[_WRITTEN] = path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if _WRITTEN not in config.stash:
        return
    from reports.html import write_matrix
    from reports.load import load_results
    from reports.summary import terminal_summary

    path = config.stash[_WRITTEN]
    document = load_results(path)
    terminalreporter.section("conformance matrix")
    terminalreporter.write_line(terminal_summary(document))
    if _NOTICE in config.stash:
        terminalreporter.write_line(config.stash[_NOTICE])
    terminalreporter.write_line(f"results: {path}")
    if not config.getoption("--no-html"):
        html = path.with_name("matrix.html") if path == _results_path(config) else path.with_suffix(".html")
        write_matrix(document, html)
        terminalreporter.write_line(f"matrix:  {html}")
