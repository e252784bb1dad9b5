"""Pytest glue for the matrix: options, validation, cell collection, result recording, the summary.

`pytest --grade` collects `tests/test_matrix.py` with one test per (parser, case), whose modes' cells are
graded together; without `--grade` that module is ignored and `pytest` runs the framework's own tests.
Parsers run in worker processes (`contract.grading.isolation`); verdicts against the expectation files are given
here, in the pytest process. The options are read once into `contract.run.settings.RunSettings`, which is
passed on from there; the results document is built by `contract.run.document`.
A complete unfiltered run writes `--results` (holding a lock on it while it runs); a shard of one
(`--shard K/N`) writes `shard-K-of-N.json` beside it; a filtered or incomplete one writes its own file under
`filtered/` beside it. `--receipt PATH` states which one the run wrote (`contract.run.receipt`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import fixtures
from contract import expectations
from contract.cases.family import REAL, SYNTHETIC, TIERS, Family, in_tier
from contract.grading.adapter import BUILTIN_ENGINES, engine_module
from contract.grading.cell import Cell, CellGroup, settled
from contract.grading.isolation import IsolatedGrader, Limits
from contract.run import results as results_file
from contract.run.document import engine_runs, results_document, run_record
from contract.run.plan import grouped, parse_shard, parser_names, plan, shard
from contract.run.receipt import Receipt
from contract.run.schema import rerun_of
from contract.run.settings import RunSettings
from contract.streams.profiles import CI, EXAMPLES
from contract.streams.vocabulary import missing_vocabularies
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
    group.addoption("--cell-cpu", type=float, default=Limits.cell_cpu,
                    help="CPU seconds the parser's calls may take together on one cell before it counts as too slow")
    group.addoption("--no-html", action="store_true", help="do not write the HTML matrix beside the results")
    group.addoption("--no-full-html", action="store_true",
                    help="write the HTML matrix beside a filtered run's results only (nox draws the combined "
                         "matrix from complete ones)")
    group.addoption("--cpu-load", type=int, default=0, metavar="N",
                    help="keep N processes spinning on the CPU while grading: verdicts must not change")
    group.addoption("--shard", default=None, metavar="K/N",
                    help="grade the K-th of N deterministic parts of the matrix into shard-K-of-N.json beside "
                         "--results; `python -m reports.merge` joins the parts into the full results")
    group.addoption("--receipt", default=None, metavar="PATH",
                    help="at the end, write here which results file the run wrote and whether it is the full "
                         "one (JSON, `contract.run.receipt`): how nox knows to redraw the combined matrix")


def _grading(config: pytest.Config) -> bool:
    return bool(config.getoption("--grade"))


def _settings(config: pytest.Config) -> RunSettings:
    """The run's settings, read once from its command line (a bad one is a UsageError naming the option)."""
    if _SETTINGS not in config.stash:
        config.stash[_SETTINGS] = _read_settings(config)
    return config.stash[_SETTINGS]


def _read_settings(config: pytest.Config) -> RunSettings:
    # hypothesis's own --hypothesis-profile option picks the random/chars search depth (ci by default)
    profile = config.getoption("hypothesis_profile", default=None) or CI
    if profile not in EXAMPLES:
        raise pytest.UsageError(f"--hypothesis-profile {profile!r}: the matrix knows {', '.join(EXAMPLES)}")
    tier = config.getoption("--vocabulary")
    given, default = config.getoption("--expectations"), expectations_dir(tier)
    folder = Path(given) if given else default
    spec = config.getoption("--shard")
    try:
        return RunSettings(
            results=Path(config.getoption("--results")).resolve(), expectations=folder,
            custom_expectations=folder.resolve() != default.resolve(),
            engines=tuple(config.getoption("--engine") or ["reference"]),
            families=_selection(config, "--family"), modes=_selection(config, "--mode"),
            cases=_selection(config, "--case"), tier=tier, hypothesis_profile=profile,
            limits=Limits(config.getoption("--hang-after"), config.getoption("--memory-limit"),
                          config.getoption("--cell-cpu")),
            shard=spec if spec and parse_shard(spec)[1] > 1 else None, cpu_load=config.getoption("--cpu-load"),
            narrowed=_narrowed(config))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _selection(config: pytest.Config, option: str) -> tuple[str, ...] | None:
    chosen = config.getoption(option)
    return tuple(chosen) if chosen else None


def _narrowed(config: pytest.Config) -> bool:
    """The run grades a selection, not the whole matrix of its engines."""
    option = config.option
    return bool(config.getoption("--family") or config.getoption("--mode") or config.getoption("--case")
                or getattr(option, "keyword", "") or getattr(option, "markexpr", "")
                or getattr(option, "deselect", None) or getattr(option, "lf", False)
                or any("::" in arg for arg in config.args))


def _families(config: pytest.Config) -> dict[str, Family]:
    """The families the run grades, by name, in its vocabulary tier."""
    return in_tier(all_families(), _settings(config).tier)


def _groups(config: pytest.Config) -> list[CellGroup]:
    """The run's (parser, case) groups, in plan order; a shard's part of them. Planned once per run."""
    if _GROUPS not in config.stash:
        settings = _settings(config)
        cells = plan(settings.engines, settings.families, settings.modes, settings.cases, registry=_families(config))
        config.stash[_GROUPS] = shard(grouped(cells), settings.shard)
    return config.stash[_GROUPS]


def _cells(config: pytest.Config) -> list[Cell]:
    return [cell for group in _groups(config) for cell in group.cells]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`--grade` collects only the matrix; without it, only the framework's own tests."""
    if collection_path.suffix != ".py":
        return None
    if _grading(config):
        return collection_path != MATRIX_MODULE
    return collection_path == MATRIX_MODULE or None


def _validate(config: pytest.Config) -> None:
    """Bad options, fixtures or expectation files stop the run at once with one line naming what is wrong."""
    settings = _settings(config)
    try:
        families = _families(config)
    except (ValueError, TypeError, KeyError) as exc:
        raise pytest.UsageError(str(exc).strip('"')) from None
    unknown = set(settings.families or ()) - set(families)
    if unknown:
        raise pytest.UsageError(f"--family {', '.join(sorted(unknown))}: known families are "
                                f"{', '.join(families)}")
    try:
        for spec in settings.engines:
            module = engine_module(spec)
            expectations.load(settings.expectations / f"{module.name}.toml", parser_names(module))
        cells = _cells(config)
    except (ValueError, KeyError) as exc:
        raise pytest.UsageError(str(exc).strip('"')) from None
    needed = {families[c.family] for c in cells if c.family in families}
    missing = missing_vocabularies(f.graded_vocabulary for f in needed if f.graded_vocabulary)
    if missing:
        raise pytest.UsageError(missing[0])


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads the profile and fails with a traceback
def pytest_configure(config: pytest.Config) -> None:
    if not _grading(config):
        return
    _take_over_xdist(config)
    _validate(config)
    settings = _settings(config)
    if not settings.narrowed:
        lock = results_file.ResultsLock(settings.complete_path)
        try:
            lock.acquire()
        except results_file.ResultsBusy as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[_LOCK] = lock
    config.stash[_PARTS] = results_file.parts_dir(settings.results)
    config.stash[_LOAD] = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                           for _ in range(settings.cpu_load)]
    config.stash[_STARTED] = (datetime.now(UTC), time.perf_counter())


def _take_over_xdist(config: pytest.Config) -> None:
    """A grade runs in this one process, which keeps `-n` parser workers busy (`contract.grading.isolation`): xdist's
    own workers would only relay to them, at the cost of a process each and a message per test."""
    workers = getattr(config.option, "numprocesses", None)
    config.stash[_WORKERS] = int(workers) if isinstance(workers, int) and workers > 0 else 1
    if workers:
        config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []


_SETTINGS = pytest.StashKey[RunSettings]()
_STARTED = pytest.StashKey[tuple[datetime, float]]()
_WORKERS = pytest.StashKey[int]()  # parser workers grading at once (-n)
_GROUPS = pytest.StashKey[list[CellGroup]]()  # the run's plan
_PARTS = pytest.StashKey[Path]()  # this run's record logs
_LOCK = pytest.StashKey[results_file.ResultsLock]()  # held by a run that may write the full results
_LOAD = pytest.StashKey[list[subprocess.Popen[bytes]]]()  # --cpu-load spinners
_WRITTEN = pytest.StashKey[Path]()  # the results file this run wrote
_NOTICE = pytest.StashKey[str]()  # why it is not the full results file


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "group" in metafunc.fixturenames:
        groups = _groups(metafunc.config) if _grading(metafunc.config) else []
        metafunc.parametrize("group", groups, ids=[g.id for g in groups])
    if "engine_spec" in metafunc.fixturenames:
        specs = _settings(metafunc.config).engines if _grading(metafunc.config) else ()
        metafunc.parametrize("engine_spec", specs)


@pytest.fixture(scope="session")
def grader(request: pytest.FixtureRequest, record_log: results_file.RecordLog, families: dict[str, Family]):
    """The pool of parser workers, told every group the session will ask for, in order."""
    config = request.config
    settings = _settings(config)
    isolated = IsolatedGrader(settings.hypothesis_profile, settings.limits, config.stash[_WORKERS],
                              families=fixtures.__name__, tier=settings.tier)
    groups = [item.callspec.params["group"] for item in request.session.items
              if hasattr(item, "callspec") and "group" in item.callspec.params]
    isolated.plan([g.cells for g in groups if not all(settled(cell, families) for cell in g.cells)])
    yield isolated
    isolated.close()
    record_log.parser_cpu(isolated.spent_s)


@pytest.fixture(scope="session")
def known(pytestconfig: pytest.Config):
    """Each engine's expectations, loaded once per process (validated before the run began)."""
    directory = _settings(pytestconfig).expectations
    loaded: dict[str, expectations.Expectations] = {}

    def of(engine: str) -> expectations.Expectations:
        if engine not in loaded:
            loaded[engine] = expectations.load(directory / f"{engine}.toml")
        return loaded[engine]

    return of


@pytest.fixture(scope="session")
def families(pytestconfig: pytest.Config) -> dict[str, Family]:
    """The families the run grades, by name, in its vocabulary tier."""
    return _families(pytestconfig)


@pytest.fixture(scope="session")
def other_tier(pytestconfig: pytest.Config, families: dict[str, Family]):
    """The other vocabulary tier's expectations of a cell's engine, where the two tiers grade its family on
    different tokens (None with --expectations, or without a file): they tell which tier a failure needs."""
    settings = _settings(pytestconfig)
    tier = SYNTHETIC if settings.tier == REAL else REAL
    loaded: dict[str, tuple[str, expectations.Expectations] | None] = {}

    def of(cell: Cell) -> tuple[str, expectations.Expectations] | None:
        graded_on = families.get(cell.family or "")
        if graded_on is None or not graded_on.tiered:
            return None
        engine = cell.engine_name
        if engine not in loaded:
            path = expectations_dir(tier) / f"{engine}.toml"
            loaded[engine] = None if settings.custom_expectations or not path.exists() else (tier, expectations.load(path))
        return loaded[engine]

    return of


@pytest.fixture(scope="session")
def record_log(pytestconfig: pytest.Config):
    log = results_file.RecordLog(pytestconfig.stash[_PARTS], "main")
    yield log
    log.close()


@pytest.fixture(scope="session")
def rerun(pytestconfig: pytest.Config):
    templates: dict[str, str] = {}

    def of(cell: Cell) -> str:
        if cell.engine not in templates:
            templates[cell.engine] = rerun_template(pytestconfig, cell.engine)
        return rerun_of(templates[cell.engine], cell.parser, cell.case, cell.mode)

    return of


def rerun_template(config: pytest.Config, engine: str) -> str:
    """The command that grades one cell of this engine again (`RunSettings.rerun_template`); builtin engines
    rerun in their own nox session, reusing its virtualenv (a candidate build's: `nox -s candidate` sets
    CANDIDATE_ENV to it)."""
    build = os.environ.get(CANDIDATE_ENV)
    session = ("candidate" if build else "grade") if engine in BUILTIN_ENGINES else None
    return _settings(config).rerun_template(engine, session, build)


def _document(config: pytest.Config, parts: results_file.Parts) -> dict[str, Any]:
    settings = _settings(config)
    started, clock = config.stash[_STARTED]
    engines = engine_runs(settings, parts.cells, lambda spec: rerun_template(config, spec))
    run = run_record(settings, engines, started=started, finished=datetime.now(UTC),
                     duration_s=time.perf_counter() - clock, workers=config.stash[_WORKERS],
                     command="pytest " + " ".join(config.invocation_params.args),
                     seed=config.getoption("hypothesis_seed", default=None), parser_cpu_s=parts.parser_cpu_s)
    return results_document(run, _cells(config), parts, _families(config))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The framework's tests marked slow (whole grades in a subprocess) first, in their order: with -n 2 each
    then runs beside a stream of quick ones instead of alone on one worker at the end."""
    if not _grading(config):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not _grading(config) or _STARTED not in config.stash:
        return
    for spinner in config.stash.get(_LOAD, []):
        spinner.kill()
        spinner.wait()
    settings = _settings(config)
    full = settings.results
    parts = results_file.read_parts(config.stash[_PARTS])
    cells = parts.cells
    planned = len(_cells(config))
    if settings.narrowed:
        path = results_file.filtered_path(full)
        config.stash[_NOTICE] = f"a filtered run ({len(cells)} cells): its own results file; {full} is untouched"
    elif len(cells) < planned:
        path = results_file.filtered_path(full, "-incomplete")
        config.stash[_NOTICE] = (f"the run stopped after {len(cells)} of {planned} cells: written apart; "
                                 f"{full} is untouched")
    else:
        path = settings.complete_path
        if path != full:
            config.stash[_NOTICE] = (f"shard {settings.shard} of the matrix: merge the shards into "
                                     f"{full} with `python -m reports.merge`")
    cells.sort(key=_plan_order(config))
    results_file.write(path, _document(config, parts))
    results_file.remove_parts(config.stash[_PARTS])
    if _LOCK in config.stash:
        config.stash[_LOCK].release()
    config.stash[_WRITTEN] = path
    if config.getoption("--receipt"):
        Receipt(path, complete=path == full).write(Path(config.getoption("--receipt")))


def _plan_order(config: pytest.Config):  # noqa: ANN202 - a sort key
    """Cells in plan order, whichever worker graded them (so a run's file does not depend on scheduling)."""
    order = {(c.parser, c.case, c.mode): n for n, c in enumerate(_cells(config))}
    return lambda cell: order.get((cell.parser, cell.case, cell.mode), len(order))


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
    settings = _settings(config)
    complete = path == settings.complete_path
    if not config.getoption("--no-html") and not (complete and config.getoption("--no-full-html")):
        html = path.with_name("matrix.html") if path == settings.results else path.with_suffix(".html")
        write_matrix(document, html)
        terminalreporter.write_line(f"matrix:  {html}")
