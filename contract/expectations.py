"""KnownBroken: per-engine expectation files, the xfail / fixed / changed verdicts, and their refresh.

Files live at `fixtures/expectations/<engine>.toml`, one `[[known_broken]]` table per cell:

    [[known_broken]]
    parser = "vllm/kimi_k2"          # engine/name
    case = "tool.missing_end"
    mode = "tokens"                   # or "*" for every mode
    reason = "drops every call when the section end is missing"
    link = "https://…"                # optional
    untriaged = false                 # true when written by `update` and not yet reviewed
    observed = '''{…}'''              # the failure signature, JSON (written by `update`)

A known-broken cell that fails with the same signature is `xfail`; one that passes is `fixed`
(remove the entry); one that fails differently is `changed` (the diff is shown).
"""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

REQUIRED = ("parser", "case", "mode", "reason")
FAILING = ("fail", "changed", "error", "timeout")


@dataclass(frozen=True)
class KnownBroken:
    parser: str
    case: str
    mode: str
    reason: str
    link: str = ""
    untriaged: bool = False
    observed: Mapping[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.parser, self.case, self.mode)

    def to_toml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"parser": self.parser, "case": self.case, "mode": self.mode, "reason": self.reason}
        if self.link:
            out["link"] = self.link
        out["untriaged"] = self.untriaged
        if self.observed is not None:
            out["observed"] = json.dumps(self.observed, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        return out


class ExpectationError(ValueError):
    """An expectations file that cannot be used; names the file, entry and field."""


def _entry(path: Path, n: int, raw: Any) -> KnownBroken:
    where = f"{path}: known_broken entry {n + 1}"
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: not a table")
    for key in REQUIRED:
        if not isinstance(raw.get(key), str):
            raise ExpectationError(f"{where} ({raw.get('parser')}, {raw.get('case')}): field {key!r} missing or not a string")
    observed = raw.get("observed")
    if observed is not None:
        try:
            observed = json.loads(observed)
        except (TypeError, ValueError) as exc:
            raise ExpectationError(f"{where} ({raw['parser']}, {raw['case']}): field 'observed' is not JSON: {exc}") from exc
    return KnownBroken(raw["parser"], raw["case"], raw["mode"], raw["reason"], str(raw.get("link", "")),
                       bool(raw.get("untriaged", False)), observed)


def load(path: Path) -> dict[tuple[str, str, str], KnownBroken]:
    """Entries of one file keyed by (parser, case, mode); a missing file has none."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationError(f"{path}: not valid TOML: {exc}") from exc
    entries = [_entry(path, n, raw) for n, raw in enumerate(data.get("known_broken", []))]
    keyed: dict[tuple[str, str, str], KnownBroken] = {}
    for entry in entries:
        if entry.key in keyed:
            raise ExpectationError(f"{path}: duplicate entry for {entry.key}")
        keyed[entry.key] = entry
    return keyed


def lookup(entries: Mapping[tuple[str, str, str], KnownBroken], parser: str, case: str, mode: str) -> KnownBroken | None:
    return entries.get((parser, case, mode)) or entries.get((parser, case, "*"))


def signature(status: str, checks: Iterable[str], observed: Mapping[str, Any] | None) -> dict[str, Any]:
    """What "fails the same way" means: the status, the failed checks and the normalized message."""
    return {"status": status, "checks": sorted(set(checks)), "observed": observed}


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).splitlines()


@dataclass(frozen=True)
class Verdict:
    outcome: str
    diff: str | None = None


def resolve(status: str, current: Mapping[str, Any], entry: KnownBroken | None) -> Verdict:
    """Combine a graded status with what is known about the cell."""
    if entry is None:
        return Verdict(status)
    if status == "pass":
        return Verdict("fixed")
    if entry.observed is None or dict(entry.observed) == dict(current):
        return Verdict("xfail")
    diff = "\n".join(difflib.unified_diff(_pretty(entry.observed), _pretty(current), "recorded", "now", lineterm=""))
    return Verdict("changed", diff)


def update(path: Path, engine: str, cells: Iterable[Mapping[str, Any]]) -> tuple[int, int, int]:
    """Refresh one engine's file from result cells: add failing cells as untriaged entries, refresh the
    signature of changed ones (keeping their reason), drop fixed ones. Returns (added, refreshed, removed)."""
    entries = load(path)
    added = refreshed = removed = 0
    for cell in cells:
        if cell["engine"] != engine:
            continue
        key = (cell["parser"], cell["case"], cell["mode"])
        existing = lookup(entries, *key)
        if cell["outcome"] == "fixed" and existing:
            entries.pop(existing.key)
            removed += 1
        elif cell["outcome"] in FAILING:
            current = cell["signature"]
            if existing is None:
                entries[key] = KnownBroken(*key, reason="", untriaged=True, observed=current)
                added += 1
            elif existing.observed != current:
                entries[existing.key] = KnownBroken(existing.parser, existing.case, existing.mode, existing.reason,
                                                    existing.link, existing.untriaged, current)
                refreshed += 1
    ordered = sorted(entries.values(), key=lambda e: e.key)
    header = (f"# Known-broken cells of engine {engine!r}. Refreshed by `nox -s update_expectations`;\n"
              "# write each untriaged entry's reason (what the parser does wrong), then set untriaged = false.\n\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    body = tomli_w.dumps({"known_broken": [e.to_toml() for e in ordered]}, multiline_strings=True) if ordered else ""
    path.write_text(header + body, encoding="utf-8")
    return added, refreshed, removed


def main(argv: list[str] | None = None) -> int:
    """`python -m contract.expectations RESULTS [--dir DIR]`: refresh every engine's file from a run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m contract.expectations", description=main.__doc__)
    parser.add_argument("results", type=Path)
    parser.add_argument("--dir", type=Path, default=Path(__file__).parents[1] / "fixtures" / "expectations")
    args = parser.parse_args(argv)
    try:
        cells = json.loads(args.results.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args.results}: cannot read cells: {exc}")
        return 2
    for engine in sorted({c["engine"] for c in cells}):
        path = args.dir / f"{engine}.toml"
        added, refreshed, removed = update(path, engine, cells)
        print(f"{path}: {added} added (untriaged), {refreshed} refreshed, {removed} removed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
