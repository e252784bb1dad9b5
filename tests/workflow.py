"""The GitHub Actions workflows of docs/ci.md, read and run as GitHub would run their `run:` steps."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "docs" / "ci.md"


def workflow(name: str) -> dict[str, Any]:
    """The workflow of docs/ci.md with this `name:`."""
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", RECIPE.read_text(encoding="utf-8"), re.DOTALL)]
    found = [b for b in blocks if b["name"] == name]
    assert len(found) == 1, f"docs/ci.md holds one workflow named {name!r}: {[b['name'] for b in blocks]}"
    return found[0]


def expand(text: str, values: dict[str, str]) -> str:
    """`${{ expression }}` replaced as GitHub would, from `values` (every expression must be known)."""
    def value(match: re.Match[str]) -> str:
        key = match.group(1).strip()
        assert key in values, f"the test knows no value for ${{{{ {key} }}}}"
        return values[key]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def run_step(step: dict[str, Any], env: dict[str, str], workspace: Path, folder: Path = ROOT,
             values: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub runs it: bash, in the checkout (`folder`), with the job's env and GITHUB_WORKSPACE."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    command = expand(step["run"], values or {})
    done = subprocess.run(["bash", "-e", "-c", command], cwd=folder, capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "GITHUB_WORKSPACE": str(workspace), **env, "PATH": path})
    print(f"$ {command}  -> exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done
