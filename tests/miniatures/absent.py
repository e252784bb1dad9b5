"""An engine that is not installed: every cell is `skip`, never fail or error."""

from __future__ import annotations

from contract.grading.adapter import Engine

ENGINE = "absent"
MAPPING: dict[str, str | None] = {"kimi_k2": "kimi_k2"}


def load() -> Engine:
    import engine_that_is_not_installed  # noqa: F401

    raise AssertionError("unreachable")
