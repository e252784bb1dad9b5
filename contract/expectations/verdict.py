"""A graded cell against what is known about it: xfail, fixed or changed."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


def signature(status: str, checks: Iterable[str], observed: Mapping[str, Any] | None) -> dict[str, Any]:
    """What "fails the same way" means: the status, the failed checks and the normalized message."""
    return {"status": status, "checks": sorted(set(checks)), "observed": observed}


@dataclass(frozen=True)
class Verdict:
    outcome: str
    diff: str | None = None


def resolve(status: str, current: Mapping[str, Any], known: bool, recorded: Mapping[str, Any] | None) -> Verdict:
    """Combine a graded status with whether a bug cites the cell and the failure recorded for it: a cited cell
    that fails as recorded is xfail, one that passes is fixed, one that fails differently is changed."""
    if not known:
        return Verdict(status)
    if status == "pass":
        return Verdict("fixed")
    if recorded is None or dict(recorded) == dict(current):
        return Verdict("xfail")
    diff = "\n".join(difflib.unified_diff(_pretty(recorded), _pretty(current), "recorded", "now", lineterm=""))
    return Verdict("changed", diff)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).splitlines()
