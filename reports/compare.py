"""Two results files cell by cell: which verdicts differ (outcome, or the failure signature behind it).

`python -m reports.compare A.json B.json` prints every cell that differs and exits 1 if any does, 0 if
the two agree on every cell: how a run on a busy machine is checked against one on an idle machine.
Cells are matched by (parser, case, mode); timings are never compared.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from contract.grading.record import CellRecord
from reports.merge import load_merged

Key = tuple[str, str, str]


@dataclass(frozen=True)
class Difference:
    key: Key
    before: str  # outcome, or "absent"
    after: str
    signature_changed: bool  # same outcome, different failure


def _by_key(cells: Iterable[CellRecord]) -> dict[Key, CellRecord]:
    return {(c.parser, c.case, c.mode): c for c in cells}


def differences(before: Iterable[CellRecord], after: Iterable[CellRecord]) -> list[Difference]:
    """Cells whose outcome or signature differs, and cells present in only one of the two, in key order."""
    old, new = _by_key(before), _by_key(after)
    found = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        outcome_a = str(a.outcome) if a else "absent"
        outcome_b = str(b.outcome) if b else "absent"
        signature_changed = bool(a and b and a.signature != b.signature)
        if outcome_a != outcome_b or signature_changed:
            found.append(Difference(key, outcome_a, outcome_b, signature_changed and outcome_a == outcome_b))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports.compare", description=__doc__)
    parser.add_argument("before", type=Path, nargs="+", help="results files of the first run (one per engine)")
    parser.add_argument("--against", type=Path, nargs="+", required=True, help="results files of the second run")
    args = parser.parse_args(argv)
    try:
        before, after = load_merged(args.before), load_merged(args.against)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    found = differences(before["cells"], after["cells"])
    print(f"{len(before['cells'])} cells vs {len(after['cells'])}: {len(found)} differ")
    if found:
        print(tabulate([[*d.key, d.before, d.after, "signature" if d.signature_changed else "outcome"]
                        for d in found], headers=["parser", "case", "mode", "before", "after", "what"]))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
