"""The CI recipe of docs/ci.md, every `run:` step as written, against a local checkout of an engine.

The engine is transformers (the recipe's env names the engine and build; transformers is the quickest to
install and grade): its pinned release unpacked from the wheel into a git repository, with one module
patched: first to break a behaviour (one-shot parsing drops a call without arguments: the gate must list
exactly that case's cells and exit 1), then, from the release again, to fix a known-broken one (Gemma 4 call
names with dots and hyphens: exactly those cells improve, exit 0). A standalone repro of each moved cell
fails on the build that has the bug and passes on the other. The steps that are GitHub actions (`uses:`)
are stood in for here: the checkouts are this project and the temporary repository, Python is this
interpreter.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from workflow import ROOT, workflow
from workflow import run_step as run_workflow_step

from contract.streams.chunking import CONFORMANCE_MODES

# a patch that breaks a request alone moves no cell of the concurrent mode, which compares a parser with itself;
# the Responses API's stream of a call is known broken already (the release adds its closing message item at the
# call's output index, which a client rejects): a patch there makes such cells fail differently, not regress
STREAMED_RESPONSES = "responses-tokens"
MODES = tuple(m.name for m in CONFORMANCE_MODES if m.name != STREAMED_RESPONSES)

STOOD_IN = {"actions/checkout@v4", "actions/setup-python@v5", "marocchino/sticky-pull-request-comment@v2",
            "actions/upload-artifact@v4"}
ENGINE, RELEASE = "transformers", "transformers==5.23.0"
PARSERS = ("transformers/gemma4", "transformers/qwen3", "transformers/qwen3_5")
SERVING = "transformers/cli/serving/utils.py"
NORMALIZED = "    tool_calls = [_normalize_tool_call(v) for v in raw] or None\n"
# one-shot parsing drops a call whose arguments are empty (streaming still sends it)
BREAK = (SERVING, NORMALIZED, "    raw = [v for v in raw if v['function'].get('arguments') != {}]\n" + NORMALIZED)
GEMMA_NAME = r'"open_pattern": r"<\|tool_call>call:(?P<name>\w+)",'
# Gemma 4 call names may hold dots and hyphens (`mcp.github.create-issue_v2`), which `\w+` cut short
FIX = (SERVING, GEMMA_NAME, GEMMA_NAME.replace(r"\w+", r"[\w.-]+"))
PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "transformers"
version = "5.23.0"

[tool.setuptools.packages.find]
include = ["transformers*"]
"""


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.name=matrix", "-c", "user.email=matrix@localhost",
                           *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def release_checkout(folder: Path) -> str:
    """The pinned release's source as a git checkout with an installable pyproject; its commit."""
    wheels = folder.parent / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", RELEASE, "-d", str(wheels)],
                   check=True, timeout=900)
    (wheel,) = wheels.glob("transformers-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder, [n for n in archive.namelist() if n.startswith("transformers/")])
    (folder / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (folder / ".gitignore").write_text("__pycache__/\n*.egg-info/\n", encoding="utf-8")
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-qm", f"{RELEASE}, unpacked")
    return _git(folder, "rev-parse", "HEAD")


def patched(folder: Path, base: str, edit: tuple[str, str, str], message: str) -> str:
    """The release with one edit to one parser module, committed; the commit."""
    _git(folder, "reset", "-q", "--hard", base)
    module, old, new = edit
    path = folder / module
    source = path.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"{module} changed upstream: the patch no longer applies"
    path.write_text(source.replace(old, new), encoding="utf-8")
    _git(folder, "commit", "-qam", message)
    return _git(folder, "rev-parse", "HEAD")


def run_step(step: dict[str, Any], env: dict[str, str], workspace: Path) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub runs it: bash, in its working directory (the matrix checkout is this project)."""
    return run_workflow_step(step, env, workspace, ROOT if step.get("working-directory") == "matrix" else workspace)


def cells(transitions: list[dict[str, Any]], *kinds: str) -> set[tuple[str, str, str]]:
    return {(t["parser"], t["case"], t["mode"]) for t in transitions if t["kind"] in kinds}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_recipe_gates_a_patched_engine(tmp_path: Path) -> None:
    job = workflow("parser conformance")["jobs"]["conformance"]
    steps = job["steps"]
    assert {s["uses"] for s in steps if "uses" in s} == STOOD_IN, "a new action in the recipe needs a stand-in here"
    env = {k: str(v).replace("${{ github.workspace }}", str(tmp_path)) for k, v in job["env"].items()}
    # the recipe's two settings, as a transformers maintainer would set them: the engine, and its checkout
    env |= {"ENGINE": ENGINE, "BUILD": str(tmp_path / "engine")}
    env |= {"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md")}
    out, build = Path(env["MATRIX_OUT"]), Path(env["BUILD"])
    base = release_checkout(build)
    broken = patched(build, base, BREAK, "serve: drop calls without arguments (one-shot parsing)")

    commands = [s for s in steps if "run" in s]
    for step in commands:
        done = run_step(step, env, tmp_path)
        expected_exit = 1 if step["name"] == "Gate on regressions" else 0
        assert done.returncode == expected_exit, f"{step['name']}: exit {done.returncode}"

    candidate = json.loads((out / "candidates" / ENGINE / "results.json").read_text(encoding="utf-8"))
    assert candidate["run"]["engines"][ENGINE]["build"] == {
        "distribution": ENGINE, "version": "5.23.0", "source": "editable", "url": str(build), "commit": broken,
        "dirty": False}
    gate = json.loads((out / "gate.json").read_text(encoding="utf-8"))
    assert gate["regressed"] is True
    # exactly the patched behaviour: one-shot parsing loses every call with empty arguments, so batch fails and
    # every streaming mode no longer equals batch: tool.empty_args of every parser, tool.no_arguments where the
    # release passes it (Qwen3.5's `<function=noop></function>`; Qwen3's and Gemma 4's already raise before the
    # patch is reached), and the known-broken truncated call Qwen3.5 executes with `{}` (now failing
    # differently); nothing else moved
    assert cells(gate["transitions"], "regression") == (
        {(p, "tool.empty_args", m) for p in PARSERS for m in MODES}
        | {("transformers/qwen3_5", "tool.no_arguments", m) for m in MODES})
    assert cells(gate["transitions"], "changed") == (
        {("transformers/qwen3_5", "tool.truncated_args", m) for m in (*MODES, STREAMED_RESPONSES)}
        | {(p, "tool.empty_args", STREAMED_RESPONSES) for p in PARSERS}
        | {("transformers/qwen3_5", "tool.no_arguments", STREAMED_RESPONSES)})
    assert cells(gate["transitions"], "improvement", "new", "removed") == set()
    summary = (tmp_path / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## ❌ Parser conformance gate") and "`tool.empty_args`" in summary

    # the maintainer's repro of a regression: fails on their build, passes on the release
    repro = standalone_repro("transformers/qwen3:tool.empty_args:batch", tmp_path / "repro", "--candidate")
    assert run_repro(repro, "candidate").returncode == 1
    assert run_repro(repro, "grade").returncode == 0

    # the fix repairs the call name everywhere; the Responses API's stream of that call still breaks on the
    # release's other bug (its message item added at the call's output index), so that cell fails differently,
    # which the gate reports and fails on: the maintainer refreshes its expectation
    fixed = patched(build, base, FIX, "serve: Gemma 4 call names with dots and hyphens")
    for step in commands:
        if step["name"] in ("Grade this pull request's build", "Gate on regressions"):
            done = run_step(step, env, tmp_path)
            expected_exit = 1 if step["name"] == "Gate on regressions" else 0
            assert done.returncode == expected_exit, f"{step['name']}: exit {done.returncode}"
    gate = json.loads((out / "gate.json").read_text(encoding="utf-8"))
    assert cells(gate["transitions"], "improvement") == {("transformers/gemma4", "tool.name_chars", m) for m in MODES}
    assert cells(gate["transitions"], "changed") == {("transformers/gemma4", "tool.name_chars", STREAMED_RESPONSES)}
    assert cells(gate["transitions"], "regression", "new", "removed") == set()
    candidate = json.loads((out / "candidates" / ENGINE / "results.json").read_text(encoding="utf-8"))
    assert candidate["run"]["engines"][ENGINE]["build"]["commit"] == fixed
    assert (tmp_path / "step-summary.md").read_text(encoding="utf-8").count("Parser conformance gate") == 2
    # the repro of the known-broken cell, written on the release, fails there and passes on the fixed build
    repro = standalone_repro("transformers/gemma4:tool.name_chars:tokens", tmp_path / "repro")
    assert run_repro(repro, "grade").returncode == 1
    assert run_repro(repro, "candidate").returncode == 0


def standalone_repro(cell: str, out: Path, *options: str) -> Path:
    """`nox -s repro -- CELL`, as the README gives it; the file it wrote."""
    done = run_step({"run": f"python -m nox -s repro -- {' '.join(options)} '{cell}' --out '{out}'",
                     "working-directory": "matrix"}, {}, out)
    assert done.returncode == 0
    (written,) = re.findall(r"^(\S+\.py): reproduces", done.stdout + done.stderr, re.MULTILINE)
    return Path(written)


def run_repro(path: Path, venv: str) -> subprocess.CompletedProcess[str]:
    """The repro in an engine virtualenv, isolated from this project (`-I`: no script folder, no PYTHONPATH)."""
    python = ROOT / ".nox" / f"{venv}-engine-{ENGINE}" / "bin" / "python"
    done = subprocess.run([str(python), "-I", path.name], cwd=path.parent, capture_output=True, text=True, timeout=600)
    # a failing repro fails with the cell's own failure: an AssertionError naming a check, or the engine's own
    # exception for a cell that errors (here transformers' ValueError), never with a missing import
    assert done.returncode == 0 or ("AssertionError: " in done.stderr or "ValueError: " in done.stderr), \
        done.stderr[-2000:]
    return done
