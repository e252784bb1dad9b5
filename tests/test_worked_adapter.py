"""docs/adapters.md is followed as written: its `# file:` blocks, written into an empty folder, are a whole engine
(a stand-in engine and its adapter) that the real matrix grades with no file of this repository changed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from grading_run import ROOT, grade

GUIDE = ROOT / "docs" / "adapters.md"


def guide_files() -> dict[str, str]:
    """Each fenced block of the guide that starts with `# file: PATH`, by path."""
    files = {}
    for block in re.findall(r"```(?:python|toml)\n(.*?)```", GUIDE.read_text(), re.S):
        first, _, body = block.partition("\n")
        if first.startswith("# file: "):
            files[first.removeprefix("# file: ").strip()] = body
    return files


def guide_known_broken() -> str:
    """The guide's KnownBroken entry for the worked adapter (its triage step), unindented."""
    block = re.search(r"```toml\n(?!# file: )(.*?)```", GUIDE.read_text(), re.S)
    assert block is not None, "docs/adapters.md lost its KnownBroken example"
    return "\n".join(line.strip() for line in block.group(1).splitlines()) + "\n"


def _status() -> str:
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                          text=True)
    return done.stdout if done.returncode == 0 else ""


@pytest.mark.slow
def test_the_worked_adapter_of_the_guide_is_graded(tmp_path: Path) -> None:
    files = guide_files()
    assert set(files) == {"tinyllm.py", "tiny_adapter/__init__.py", "tiny_adapter/adapter.py",
                          "tiny_adapter/coverage.toml"}
    folder = tmp_path / "engine"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    before = _status()
    run = grade(tmp_path / "out", "--engine", "tiny_adapter", "--mode", "batch", "--mode", "tokens",
                "--mode", "chars", "-n", "2", env={**os.environ, "PYTHONPATH": str(folder)})
    assert _status() == before  # nothing of this repository was touched

    cells = run.cells(parser="tinyllm/hermes")
    assert cells and {c.family for c in cells} == {"hermes"}
    assert {c.mode for c in cells} == {"batch", "tokens", "chars"}
    assert {c.outcome for c in run.cells(parser="tinyllm/hermes", case="tool.single")} == {"pass"}
    # the guide's deliberate bug, and what it says about reasoning with no reasoning parser
    dropped = run.cells(parser="tinyllm/hermes", case="tool.missing_end")
    assert dropped and all(c.outcome == "fail" for c in dropped)
    assert all(c.outcome == "fail" for c in run.cells(parser="tinyllm/hermes", case="reasoning.only"))
    assert {c.outcome for c in run.cells(parser="tinyllm/hermes", case="tool.malformed_args")} == {"error"}
    assert [e.name for e in run.results["run"].engines["tinyllm"].coverage] == ["hermes"]

    # triaged as the guide shows, the bug is known: every conformance mode of the case is xfail; the concurrent
    # cell passes (the parser drops the call alike alone and interleaved with another request)
    expectations = tmp_path / "triaged"
    expectations.mkdir()
    (expectations / "tinyllm.toml").write_text(guide_known_broken())
    triaged = grade(tmp_path / "triaged-out", "--engine", "tiny_adapter", "--case", "tool.missing_end",
                    expectations=expectations, env={**os.environ, "PYTHONPATH": str(folder)})
    assert triaged.returncode == 0, triaged.output[-2000:]
    outcomes = {c.mode: c.outcome for c in triaged.cells(parser="tinyllm/hermes")}
    assert outcomes.pop("concurrent") == "pass" and set(outcomes.values()) == {"xfail"}
