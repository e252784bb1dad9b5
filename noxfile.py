"""Sessions: tests (the framework's own), grade (the matrix), report, update_expectations, bench, lint.

Dependencies come from pyproject.toml; the project itself is not installed, pytest runs from the
checkout (the root conftest.py is the matrix plugin).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
DEPENDENCIES = PYPROJECT["project"]["dependencies"]
OPTIONAL = PYPROJECT["project"]["optional-dependencies"]
RESULTS = "reports/out/results.json"
MATRIX = "tests/test_matrix.py"
CHROMIUM = "/usr/bin/chromium"


def _ensure_chromium(session: nox.Session) -> None:
    """The browser tests drive Debian's Chromium; install it where we may (root, apt)."""
    if Path(CHROMIUM).exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        session.warn(f"{CHROMIUM} is missing and cannot be installed here: browser tests will be skipped")
        return
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env)
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", external=True, env=env)


@nox.session
def tests(session: nox.Session) -> None:
    """The framework's own tests: miniature parsers, expectations, reports, a real browser."""
    session.install(*DEPENDENCIES, *OPTIONAL["browser"])
    _ensure_chromium(session)
    # exit 5 (no tests collected, e.g. a -k that matches nothing) is not a failure of the framework
    session.run("pytest", *(session.posargs or ["-n", "2"]), success_codes=[0, 5])


@nox.session
def grade(session: nox.Session) -> None:
    """Grade the reference parsers and write reports/out/results.json and matrix.html.

    Extra arguments go to pytest: `nox -s grade -- -n 2 -k kimi_k2`.
    """
    session.install(*DEPENDENCIES)
    # a node id such as 'tests/test_matrix.py::test_cell[…]' (the matrix's rerun command) replaces the module
    target = [] if any(a.startswith(MATRIX) for a in session.posargs) else [MATRIX]
    session.run("pytest", "--grade", *target, "-q", "--results", RESULTS, *session.posargs)


@nox.session
def report(session: nox.Session) -> None:
    """Re-render the matrix and summaries from a results file: `nox -s report -- PATH`."""
    session.install(*DEPENDENCIES)
    args = session.posargs or [RESULTS]
    session.run("python", "-m", "reports", *args, "--markdown", str(Path(args[0]).with_name("summary.md")))


@nox.session
def update_expectations(session: nox.Session) -> None:
    """Write or refresh KnownBroken entries from a results file (new ones are untriaged)."""
    session.install(*DEPENDENCIES)
    session.run("python", "-m", "contract.expectations", *(session.posargs or [RESULTS]))


@nox.session
def bench(session: nox.Session) -> None:
    """Throughput and memory of the reference parsers on 16 KiB arguments, printed as a table."""
    session.install(*DEPENDENCIES)
    session.run("python", "-m", "contract.bench")


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*OPTIONAL["lint"])
    session.run("ruff", "check", ".")
