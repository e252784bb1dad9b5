"""Pytest glue for the matrix: options, cell collection, result recording, the closing summary.

`pytest --grade` collects `tests/test_matrix.py` with one test per cell; without `--grade` that
module is ignored and `pytest` runs the framework's own tests.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from contract import expectations
from contract import results as results_file
from contract.adapter import engine_module
from contract.catalog import CATALOG
from contract.family import NotApplicable, Unimplemented
from contract.matrix import Cell, Grader, plan
from contract.profiles import CI, EXAMPLES
from fixtures import EXPECTATIONS_DIR, all_families

ROOT = Path(__file__).parent
MATRIX_MODULE = ROOT / "tests" / "test_matrix.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("matrix", "parser conformance matrix")
    group.addoption("--grade", action="store_true", help="grade parsers: collect one test per matrix cell")
    group.addoption("--engine", action="append", default=None,
                    help="engine to grade: 'reference' (default) or an adapter module path; repeatable")
    group.addoption("--family", action="append", default=None, help="only these families; repeatable")
    group.addoption("--mode", action="append", default=None, help="only these modes; repeatable")
    group.addoption("--case", action="append", default=None, help="only these case ids; repeatable")
    group.addoption("--results", default=str(ROOT / "reports" / "out" / "results.json"), help="results file")
    group.addoption("--expectations", default=str(EXPECTATIONS_DIR), help="directory of <engine>.toml files")
    group.addoption("--cell-timeout", type=float, default=10.0, help="seconds a parser may run per chunking")
    group.addoption("--no-html", action="store_true", help="do not write the HTML matrix beside the results")


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
    return Path(config.getoption("--results")).resolve()


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
    """Bad options or expectation files stop the run at once, naming what is wrong."""
    unknown = set(config.getoption("--family") or ()) - set(all_families())
    if unknown:
        raise pytest.UsageError(f"--family {', '.join(sorted(unknown))}: known families are "
                                f"{', '.join(all_families())}")
    directory = Path(config.getoption("--expectations"))
    try:
        for spec in _engines(config):
            expectations.load(directory / f"{engine_module(spec).name}.toml")
        _cells(config)
    except (ValueError, KeyError) as exc:
        raise pytest.UsageError(str(exc).strip('"')) from exc


def pytest_configure(config: pytest.Config) -> None:
    if _grading(config) and not _is_worker(config):
        _validate(config)
        results_file.reset(_results_path(config))
        config.stash[_STARTED] = (datetime.now(UTC), time.perf_counter())


_STARTED = pytest.StashKey[tuple[datetime, float]]()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "cell" in metafunc.fixturenames:
        cells = _cells(metafunc.config) if _grading(metafunc.config) else []
        metafunc.parametrize("cell", cells, ids=[c.id for c in cells])


@pytest.fixture(scope="session")
def grader(pytestconfig: pytest.Config) -> Grader:
    return Grader(Path(pytestconfig.getoption("--expectations")), _profile(pytestconfig),
                  pytestconfig.getoption("--cell-timeout"))


@pytest.fixture(scope="session")
def record_log(pytestconfig: pytest.Config):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    log = results_file.RecordLog(_results_path(pytestconfig), worker)
    yield log
    log.close()


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
        rows.append({"name": family.name, "title": family.title, "positions": positions})
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
        engines[module.name] = {"version": version, "available": available,
                                "skip_reason": None if available else loaded,
                                "coverage": [row.to_json() for row in loaded.coverage] if available else []}
    for cell in _cells(config):
        parsers.setdefault(cell.parser, {"engine": cell.engine_name, "parser": cell.parser, "family": cell.family,
                                         "version": engines[cell.engine_name]["version"]})
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
            "seed": config.getoption("hypothesis_seed", default=None),
            "workers": int(numprocesses) if str(numprocesses).isdigit() else 0,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "engines": engines,
        },
        "parsers": list(parsers.values()),
        "cases": [{"id": c.id, "kind": c.kind, "title": c.title, "expected": c.expected} for c in CATALOG],
        "families": _families_json(),
        "cells": cells,
    }


_WRITTEN = pytest.StashKey[Path]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not _grading(config) or _is_worker(config) or _STARTED not in config.stash:
        return
    path = _results_path(config)
    results_file.write(path, _document(config, results_file.read_parts(path)))
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
    terminalreporter.write_line(f"results: {path}")
    if not config.getoption("--no-html"):
        html = path.with_name("matrix.html")
        write_matrix(document, html)
        terminalreporter.write_line(f"matrix:  {html}")
