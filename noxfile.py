"""Sessions: tests (the framework's own), grade (the matrix, one per engine), report,
update_expectations, bench, lint.

Dependencies come from pyproject.toml; the project itself is not installed, pytest runs from the
checkout (the root conftest.py is the matrix plugin). Each engine grades in its own virtualenv:
the engine at its pinned version, `--no-deps`, with the pins in ../shared/engines/ and CPU torch.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
DEPENDENCIES = PYPROJECT["project"]["dependencies"]
OPTIONAL = PYPROJECT["project"]["optional-dependencies"]
OUT = Path(os.environ.get("MATRIX_OUT", "reports/out"))  # tests point it elsewhere
MATRIX = "tests/test_matrix.py"
CHROMIUM = "/usr/bin/chromium"
PINS = Path(os.environ.get("ENGINE_PINS_DIR", ROOT.parent / "shared" / "engines"))
TORCH = "torch==2.13.0"  # the CPU build; the engines' own metadata would pull CUDA wheels


@dataclass(frozen=True)
class EngineInstall:
    """What an engine's grade session installs before grading."""

    requirement: str | None = None  # None: this project's own reference parsers
    pinned: bool = True  # --no-deps with ../shared/engines/<name>-<version>.pins.txt and CPU torch
    harmony_vocab: bool = False  # grades Harmony through openai-harmony: needs o200k_base.tiktoken, offline


ENGINES: dict[str, EngineInstall] = {
    "reference": EngineInstall(),
    "vllm": EngineInstall("vllm==0.33.0", harmony_vocab=True),
    "sglang": EngineInstall("sglang==0.5.23"),
    # a small Rust wheel with one dependency (pydantic): installed normally, no pin file needed
    "openai-harmony": EngineInstall("openai-harmony==0.0.8", pinned=False, harmony_vocab=True),
}


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
    """The framework's own tests: miniature parsers, expectations, reports, a real browser, and the
    commands the project prints (rerun), run verbatim, which is why nox is installed here too."""
    session.install(*DEPENDENCIES, *OPTIONAL["browser"], "nox")
    _ensure_chromium(session)
    # exit 5 (no tests collected, e.g. a -k that matches nothing) is not a failure of the framework
    session.run("pytest", *(session.posargs or ["-n", "2"]), success_codes=[0, 5])


def _install_engine(session: nox.Session, requirement: str) -> None:
    """The engine and everything its parsers import, pinned, without dependency resolution."""
    name, version = requirement.split("==")
    pins = PINS / f"{name}-{version}.pins.txt"
    if not pins.exists():
        session.error(f"{pins}: pin file missing (set ENGINE_PINS_DIR to the folder holding it)")
    session.install("--no-deps", requirement, TORCH, "-r", str(pins))


@nox.session
@nox.parametrize("engine", list(ENGINES))
def grade(session: nox.Session, engine: str) -> None:
    """Grade one engine's parsers into reports/out/<engine>/, then redraw the combined matrix.

    `nox -s grade` grades every engine in turn; `nox -s "grade(engine='vllm')"` one of them.
    Extra arguments go to pytest: `nox -s "grade(engine='reference')" -- -n 2 -k kimi_k2`. A filtered run
    (a node id, -k, --family, --case, --mode) writes reports/out/<engine>/filtered/<time>-<pid>.json and
    leaves the full results and the combined matrix as they are; a single-cell rerun skips the wiring tests.
    """
    install = ENGINES[engine]
    if install.requirement and install.pinned:
        _install_engine(session, install.requirement)
    elif install.requirement:
        session.install(install.requirement)
    session.install(*DEPENDENCIES)
    env = _harmony_vocab(session) if install.harmony_vocab else {}
    # a node id such as 'tests/test_matrix.py::test_cell[…]' (the rerun command a cell shows) replaces the module
    rerun = any(a.startswith(MATRIX) for a in session.posargs)
    if install.requirement and not rerun:
        # the adapter's wiring tests first: a miswired adapter must not be graded at all
        session.run("pytest", "tests/test_adapters.py", "-q", env={"REQUIRE_ENGINES": engine, **env})
    results = OUT / engine / "results.json"
    before = _stamp(results)
    session.run("pytest", "--grade", *([] if rerun else [MATRIX]), "-q", "--engine", engine,
                "--results", str(results), *session.posargs, env=env)
    if _stamp(results) == before:  # a filtered or stopped run wrote its own file: the full results stand
        session.log(f"{results} and the combined matrix are untouched (see the run's own results file above)")
        return
    graded = _graded()
    session.run("python", "-m", "reports", *graded, "--html", str(OUT / "matrix.html"),
                "--markdown", str(OUT / "summary.md"), "--quiet")
    session.log(f"combined matrix of {', '.join(graded)}: {OUT / 'matrix.html'}")


def _stamp(path: Path) -> int | None:
    """When a file was last replaced (results files are replaced atomically, never edited)."""
    return path.stat().st_mtime_ns if path.exists() else None


def _harmony_vocab(session: nox.Session) -> dict[str, str]:
    """o200k_base.tiktoken rebuilt from npm's js-tiktoken (hash-checked), so nothing downloads from a hub."""
    folder = Path(session.cache_dir) / "tiktoken"
    session.run("python", "-m", "parsers.openai_harmony.vocab", str(folder))
    return {"TIKTOKEN_ENCODINGS_BASE": str(folder.resolve())}


def _graded() -> list[str]:
    return sorted(str(p) for p in OUT.glob("*/results.json"))


@nox.session
def report(session: nox.Session) -> None:
    """Redraw the combined matrix and summaries: `nox -s report [-- PATH... --quiet]`.

    Without paths it reads every engine's reports/out/<engine>/results.json.
    """
    session.install(*DEPENDENCIES)
    paths = [a for a in session.posargs if a.endswith(".json")] or _graded()
    options = [a for a in session.posargs if not a.endswith(".json")]
    if not paths:
        session.error("no results files: run `nox -s grade` first or pass their paths")
    session.run("python", "-m", "reports", *paths, "--html", str(OUT / "matrix.html"),
                "--markdown", str(OUT / "summary.md"), *options)


@nox.session
def update_expectations(session: nox.Session) -> None:
    """Write or refresh KnownBroken entries from results files (new ones are untriaged)."""
    session.install(*DEPENDENCIES)
    for path in session.posargs or _graded():
        session.run("python", "-m", "contract.expectations", path)


@nox.session
def bench(session: nox.Session) -> None:
    """Throughput and memory of the reference parsers on 16 KiB arguments, printed as a table."""
    session.install(*DEPENDENCIES)
    session.run("python", "-m", "contract.bench")


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*OPTIONAL["lint"])
    session.run("ruff", "check", ".")
