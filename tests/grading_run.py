"""Run the real matrix (`pytest --grade`) in a subprocess, as a user would, and read its results."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.grading.record import CellRecord
from contract.run.receipt import Receipt
from reports.load import load_results

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    results: dict[str, Any]

    def cells(self, **match: str) -> list[CellRecord]:
        return [c for c in self.results["cells"] if all(getattr(c, k) == v for k, v in match.items())]


def grade(tmp: Path, *args: str, expectations: Path | None = None, env: dict[str, str] | None = None) -> Run:
    results, receipt = tmp / "results.json", tmp / "receipt.json"
    receipt.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q", "-p", "no:randomly",
               "--results", str(results), "--expectations", str(expectations or tmp / "expectations"),
               "--no-html", "--receipt", str(receipt), *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    output = done.stdout + done.stderr
    written = Receipt.read(receipt)
    assert written is not None, f"no results file written:\n{output[-3000:]}"
    return Run(done.returncode, output, load_results(written.results))
