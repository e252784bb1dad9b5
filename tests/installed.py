"""An engine's adapter for its wiring tests: loaded where the engine is installed (its grade session), skipped
elsewhere, and a failure instead of a skip where REQUIRE_ENGINES names the engine."""

from __future__ import annotations

import importlib
import os
from typing import Any

import pytest


def installed_engine(name: str) -> Any:
    """`parsers.<module>.load()` of engine `name` (e.g. `vllm-mlx` -> `parsers.vllm_mlx`)."""
    try:
        return importlib.import_module(f"parsers.{name.replace('-', '_')}").load()
    except ImportError as exc:
        if name in filter(None, os.environ.get("REQUIRE_ENGINES", "").split(",")):
            pytest.fail(f"{name} must be installed here (REQUIRE_ENGINES): {exc}")
        pytest.skip(f"{name} is not installed here: {exc}")
