"""An engine whose parsers have no family fixture: their cells must be `unimplemented`, failing the run."""

from __future__ import annotations

from contract.grading.adapter import Engine

ENGINE = "unmapped"
MAPPING: dict[str, str | None] = {"mystery_parser": None, "future_format": "no_such_family"}


def load() -> Engine:
    return Engine(ENGINE, "0", {})
