"""Miniature parsers, each broken in one known way, graded as an engine of their own.

Each is the reference machine with a single defect, so that every cell it fails is caused by that
defect. `tests/test_miniatures.py` grades them with the real matrix and asserts which cells are
flagged. Engine module protocol: ENGINE, MAPPING, load() (see contract/grading/adapter.py).
"""

from __future__ import annotations

from contract.grading.adapter import Engine

from .defects import DEFECTS, Miniature

ENGINE = "miniature"
MAPPING: dict[str, str | None] = {name: defect.family for name, defect in DEFECTS.items()}


def load() -> Engine:
    # a defect may bring its own Miniature (one whose one-shot path differs from its streaming one)
    return Engine(
        ENGINE,
        "0",
        {name: (lambda family, defect=defect: getattr(defect, "miniature", Miniature)(family, defect))
         for name, defect in DEFECTS.items()},
    )
