"""A grade run's receipt: which results file it wrote, and whether that is the full results file.

`pytest --grade --receipt PATH` writes it at the run's end (`conftest.py`); `noxfile.py` reads it to decide
whether the combined matrix needs redrawing, instead of guessing from the results file's modification time.
No receipt means the run wrote no results file (it stopped before its end, or never started).

Standard library only: nox imports this under its own interpreter, before any project dependency is installed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Receipt:
    """What a grade run wrote: `results`, and whether it is the complete results file (the run's whole matrix,
    unfiltered, unsharded, run to its end) rather than a filtered, stopped or shard run's own file."""

    results: Path
    complete: bool

    def write(self, path: Path) -> None:
        """Replaced whole, so a reader never sees half a receipt."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        partial.write_text(json.dumps({"results": str(self.results), "complete": self.complete}) + "\n",
                           encoding="utf-8")
        partial.replace(path)

    @classmethod
    def read(cls, path: Path) -> Receipt | None:
        """The receipt at `path`; None when there is none (the run wrote no results file). A file that is not a
        receipt is a ValueError naming it."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            data = json.loads(text)
            results, complete = data["results"], data["complete"]
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{path}: not a grade run's receipt ({exc})") from None
        if not isinstance(results, str) or not isinstance(complete, bool):
            raise ValueError(f"{path}: not a grade run's receipt (expected a results path and complete true/false)")
        return cls(Path(results), complete)
