"""KnownBroken: per-engine expectation files, the xfail / fixed / changed verdicts, and their refresh.

Two files per engine under `fixtures/expectations/`:

- `<engine>.toml`, written by people: one `[[known_broken]]` entry per bug, its reason written once:

      [[known_broken]]
      parser = "vllm/kimi_k2"            # engine/name; or parsers = [...] when the bug is shared
      case = "tool.missing_end"          # or cases = [...]: the entry covers every (parser, case) pair
      modes = ["batch", "token"]         # mode names, tier names (batch, token, char), or "*"
      reason = "drops every call when the section end is missing"
      link = "https://…"                 # optional
      untriaged = true                   # optional; written by `update`, delete once the reason is real

  Where one bug shows in different modes for different parsers or cases, the entry keeps its reason
  once and lists each place in a `[[known_broken.cells]]` sub-table (keys parser(s), case(s), modes).
  Each (parser, case) may appear in one place only, so its modes are said once.

- `<engine>.signatures.jsonl`, written only by `update` (`nox -s update_expectations`): the observed
  failure of each covered mode, one line per (parser, case, distinct signature) with the modes that
  failed that way. People never need to read it; a pull request that triages a bug changes one entry.

A covered cell that fails with its recorded signature is `xfail`; one that passes is `fixed` (narrow or
remove the entry); one that fails differently is `changed`, with a diff of recorded vs now.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .catalog import CATALOG
from .chunking import MODES
from .outcome import RECORDED

EVERY_MODE = "*"
TIERS: dict[str, tuple[str, ...]] = {
    tier: tuple(m.name for m in MODES if m.tier == tier) for tier in dict.fromkeys(m.tier for m in MODES)
}
MODE_NAMES = tuple(m.name for m in MODES)
WHERE_KEYS = {"parser": str, "parsers": list, "case": str, "cases": list, "modes": (str, list)}
BUG_KEYS = {"reason": str, "link": str, "untriaged": bool, "cells": list}
ENTRY_KEYS = {**WHERE_KEYS, **BUG_KEYS}
HEADER = (
    "# Known-broken cells of engine {engine!r}: one entry per bug, its reason written once; each (parser,\n"
    "# case) in one entry only. `modes`: mode names, tiers (batch, token, char) or \"*\". Observed failures live in\n"
    "# {engine}.signatures.jsonl, written by `nox -s update_expectations`; entries it adds are untriaged:\n"
    "# write what the parser does wrong as the reason, then delete `untriaged`.\n\n"
)


class ExpectationError(ValueError):
    """An expectations file that cannot be used; names the file, the entry and the key."""


Key = tuple[str, str]  # (parser, case)


@dataclass(frozen=True)
class KnownBroken:
    parser: str
    case: str
    modes: tuple[str, ...]  # mode names, expanded from tiers and "*"
    reason: str
    link: str = ""
    untriaged: bool = False

    @property
    def key(self) -> Key:
        return (self.parser, self.case)

    def covers(self, mode: str) -> bool:
        return mode in self.modes


@dataclass(frozen=True)
class Expectations:
    """One engine's entries by (parser, case) and the recorded signature of each covered mode."""

    entries: Mapping[Key, KnownBroken]
    signatures: Mapping[tuple[str, str, str], Mapping[str, Any]]

    def lookup(self, parser: str, case: str, mode: str) -> KnownBroken | None:
        entry = self.entries.get((parser, case))
        return entry if entry is not None and entry.covers(mode) else None

    def recorded(self, parser: str, case: str, mode: str) -> Mapping[str, Any] | None:
        return self.signatures.get((parser, case, mode))


NONE = Expectations({}, {})


def signatures_path(path: Path) -> Path:
    """`vllm.toml` -> `vllm.signatures.jsonl`."""
    return path.with_name(path.stem + ".signatures.jsonl")


def expand_modes(value: str | Sequence[str]) -> tuple[str, ...]:
    """`"*"`, or a list of mode and tier names, as mode names in catalog order; ValueError names the bad one."""
    names = [value] if isinstance(value, str) else list(value)
    wanted: set[str] = set()
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"{name!r} is not a string")
        if name == EVERY_MODE:
            wanted.update(MODE_NAMES)
        elif name in TIERS:
            wanted.update(TIERS[name])
        elif name in MODE_NAMES:
            wanted.add(name)
        else:
            raise ValueError(f"unknown mode {name!r}; modes are {', '.join(MODE_NAMES)}, tiers "
                             f"{', '.join(TIERS)}, or \"*\"")
    if not wanted:
        raise ValueError("no modes")
    return tuple(m for m in MODE_NAMES if m in wanted)


def compress_modes(modes: Iterable[str]) -> str | list[str]:
    """The shortest spelling of a set of modes: `"*"`, or tiers where a whole tier is covered."""
    chosen = set(modes)
    if chosen >= set(MODE_NAMES):
        return EVERY_MODE
    out: list[str] = []
    for tier, members in TIERS.items():
        if len(members) > 1 and set(members) <= chosen:
            out.append(tier)
        else:
            out += [m for m in members if m in chosen]
    return out


def _names(where: str, raw: dict[str, Any], one: str, many: str) -> list[str]:
    """`parser = "x"` or `parsers = ["x", "y"]` (exactly one of the two), as a list of strings."""
    if (one in raw) == (many in raw):
        raise ExpectationError(f"{where}: give exactly one of {one!r} and {many!r}")
    names = [raw[one]] if one in raw else raw[many]
    if not names or not all(isinstance(n, str) for n in names):
        raise ExpectationError(f"{where}: key {many!r} must be a non-empty list of strings: {names!r}")
    if len(set(names)) != len(names):
        raise ExpectationError(f"{where}: key {many!r} names one twice: {names!r}")
    return names


def _check_keys(where: str, raw: dict[str, Any], allowed: Mapping[str, Any]) -> None:
    for key in raw:
        if key not in allowed:
            raise ExpectationError(f"{where}: unknown key {key!r}; keys are {', '.join(allowed)}")
    for key, kind in allowed.items():
        if key in raw and not isinstance(raw[key], kind):
            raise ExpectationError(f"{where}: key {key!r} has the wrong type: {raw[key]!r}")


def _place(where: str, raw: dict[str, Any], engine: str, parsers: set[str] | None) -> tuple[list[str], list[str], tuple[str, ...]]:
    """The parsers, cases and modes one place of a bug names, checked against what exists."""
    if "modes" not in raw:
        raise ExpectationError(f"{where}: key 'modes' is missing")
    names, case_ids = _names(where, raw, "parser", "parsers"), _names(where, raw, "case", "cases")
    for parser in names:
        if not parser.startswith(f"{engine}/"):
            raise ExpectationError(f"{where}: key 'parser': {parser!r} is not a parser of engine {engine!r}")
        if parsers is not None and parser not in parsers:
            raise ExpectationError(f"{where}: key 'parser': no parser {parser!r}; {engine} has "
                                   f"{', '.join(sorted(parsers))}")
    catalog = {c.id for c in CATALOG}
    for case_id in case_ids:
        if case_id not in catalog:
            raise ExpectationError(f"{where}: key 'case': no case {case_id!r} in the catalog")
    try:
        modes = expand_modes(raw["modes"])
    except ValueError as exc:
        raise ExpectationError(f"{where}: key 'modes': {exc}") from None
    return names, case_ids, modes


def _label(raw: dict[str, Any]) -> str:
    return f"({raw.get('parser') or raw.get('parsers') or '?'}, {raw.get('case') or raw.get('cases') or '?'})"


def _entries(path: Path, n: int, raw: Any, engine: str, parsers: set[str] | None) -> list[KnownBroken]:
    """One [[known_broken]] table as KnownBroken per (parser, case) it covers."""
    where = f"{path}: known_broken[{n}]"
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: not a table")
    nested = "cells" in raw
    if not nested:
        where += f" {_label(raw)}"
    _check_keys(where, raw, BUG_KEYS if nested else ENTRY_KEYS)
    if "reason" not in raw:
        raise ExpectationError(f"{where}: key 'reason' is missing")
    reason, link = raw["reason"].strip(), raw.get("link", "")
    if not reason:
        raise ExpectationError(f"{where}: key 'reason' is empty: say what the parser does wrong")
    if link and not link.startswith(("https://", "http://")):
        raise ExpectationError(f"{where}: key 'link' is not an http(s) URL: {link!r}")
    places = []
    for m, cell in enumerate(raw["cells"] if nested else [raw]):
        here = f"{where}.cells[{m}] {_label(cell) if isinstance(cell, dict) else ''}".rstrip() if nested else where
        if not isinstance(cell, dict):
            raise ExpectationError(f"{here}: not a table")
        if nested:
            _check_keys(here, cell, WHERE_KEYS)
        places.append(_place(here, cell, engine, parsers))
    if not places:
        raise ExpectationError(f"{where}: key 'cells' is empty")
    untriaged = raw.get("untriaged", False)
    return [KnownBroken(p, c, modes, reason, link, untriaged) for names, case_ids, modes in places
            for p in names for c in case_ids]


def _signatures(path: Path, entries: Mapping[Key, KnownBroken]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """Recorded signatures of covered modes; lines for entries or modes no longer covered are ignored
    (the next `update` drops them)."""
    if not path.exists():
        return {}
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            parser, case_id, modes, signature = row["parser"], row["case"], row["modes"], row["signature"]
            expand_modes(modes)
        except (ValueError, KeyError, TypeError) as exc:
            raise ExpectationError(f"{path}: line {n}: not a signature record ({exc}); "
                                   "regenerate it with `nox -s update_expectations`") from None
        entry = entries.get((parser, case_id))
        for mode in modes:
            if entry is not None and entry.covers(mode):
                out[(parser, case_id, mode)] = signature
    return out


def load(path: Path, parsers: set[str] | None = None) -> Expectations:
    """One engine's expectations (`<engine>.toml` and its signatures), validated; a missing file has none.

    `parsers`: the engine's parser names (`engine/name`); entries naming another are an error.
    """
    if not path.exists():
        return NONE
    engine = path.stem
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationError(f"{path}: not valid TOML: {exc}") from exc
    for key in data:
        if key != "known_broken":
            raise ExpectationError(f"{path}: unknown table or key {key!r}; the file holds [[known_broken]] entries")
    raw_entries = data.get("known_broken", [])
    if not isinstance(raw_entries, list):
        raise ExpectationError(f"{path}: 'known_broken' must be an array of tables ([[known_broken]])")
    entries: dict[Key, KnownBroken] = {}
    for n, raw in enumerate(raw_entries):
        for entry in _entries(path, n, raw, engine, parsers):
            if entry.key in entries:
                raise ExpectationError(f"{path}: known_broken[{n}] {entry.key}: this (parser, case) is in an "
                                       "earlier entry too; say all its modes in one entry")
            entries[entry.key] = entry
    return Expectations(entries, _signatures(signatures_path(path), entries))


def signature(status: str, checks: Iterable[str], observed: Mapping[str, Any] | None) -> dict[str, Any]:
    """What "fails the same way" means: the status, the failed checks and the normalized message."""
    return {"status": status, "checks": sorted(set(checks)), "observed": observed}


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1).splitlines()


@dataclass(frozen=True)
class Verdict:
    outcome: str
    diff: str | None = None


def resolve(status: str, current: Mapping[str, Any], entry: KnownBroken | None,
            recorded: Mapping[str, Any] | None) -> Verdict:
    """Combine a graded status with what is known about the cell."""
    if entry is None:
        return Verdict(status)
    if status == "pass":
        return Verdict("fixed")
    if recorded is None or dict(recorded) == dict(current):
        return Verdict("xfail")
    diff = "\n".join(difflib.unified_diff(_pretty(recorded), _pretty(current), "recorded", "now", lineterm=""))
    return Verdict("changed", diff)


def _untriaged_reason(checks: Iterable[str]) -> str:
    return f"untriaged: fails {', '.join(sorted(set(checks))) or 'the run'}"


def update(path: Path, engine: str, cells: Iterable[Mapping[str, Any]]) -> tuple[int, int, int]:
    """Refresh one engine's files from result cells. A failing cell's mode joins its (parser, case) entry
    (a new entry is untriaged; a triaged one that grows becomes untriaged again, for review); a changed
    cell's signature is refreshed; a fixed mode leaves its entry (an entry left with no mode is removed).
    Returns (modes added, signatures refreshed, modes removed)."""
    known = load(path)
    entries = dict(known.entries)
    signatures = dict(known.signatures)
    added = refreshed = removed = 0
    for cell in cells:
        if cell["engine"] != engine:
            continue
        key, mode = (cell["parser"], cell["case"]), cell["mode"]
        entry = entries.get(key)
        if cell["outcome"] == "fixed" and entry is not None and entry.covers(mode):
            remaining = tuple(m for m in entry.modes if m != mode)
            if remaining:
                entries[key] = replace(entry, modes=remaining)
            else:
                del entries[key]
            signatures.pop((*key, mode), None)
            removed += 1
        elif cell["outcome"] in RECORDED:
            current = cell["signature"]
            if entry is None:
                entries[key] = KnownBroken(*key, modes=(mode,), reason=_untriaged_reason(current["checks"]),
                                           untriaged=True)
                added += 1
            elif not entry.covers(mode):
                entries[key] = replace(entry, modes=expand_modes([*entry.modes, mode]), untriaged=True)
                added += 1
            elif signatures.get((*key, mode)) != current:
                refreshed += 1
            signatures[(*key, mode)] = current
    write(path, engine, entries.values(), signatures)
    return added, refreshed, removed


def _toml_value(value: str | bool | list[str]) -> str:
    """A TOML value on one line (JSON string escapes are valid TOML basic-string escapes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def grouped(entries: Iterable[KnownBroken]) -> list[dict[str, Any]]:
    """Entries as people read them: one table per bug (reason, link), each (parsers x cases, modes) place
    in it factored so parsers with the same cases share a list; several places go in `cells` sub-tables.
    Deterministic, so `update` rewrites files canonically."""
    bugs: dict[tuple[str, str, bool], dict[tuple[str, ...], dict[str, list[str]]]] = {}
    for e in sorted(entries, key=lambda e: e.key):
        places = bugs.setdefault((e.reason, e.link, e.untriaged), {})
        places.setdefault(e.modes, {}).setdefault(e.parser, []).append(e.case)
    tables = []
    for (reason, link, untriaged), places in bugs.items():
        cells = []
        for modes, cases_by_parser in places.items():
            parsers_by_cases: dict[tuple[str, ...], list[str]] = {}
            for parser, cases in cases_by_parser.items():
                parsers_by_cases.setdefault(tuple(cases), []).append(parser)
            for cases, parsers in parsers_by_cases.items():
                place: dict[str, Any] = {"parser": parsers[0]} if len(parsers) == 1 else {"parsers": parsers}
                place.update({"case": cases[0]} if len(cases) == 1 else {"cases": list(cases)})
                place["modes"] = compress_modes(modes)
                cells.append(place)
        cells.sort(key=_first)
        table: dict[str, Any] = {**cells[0]} if len(cells) == 1 else {}
        table["reason"] = reason
        if link:
            table["link"] = link
        if untriaged:
            table["untriaged"] = True
        if len(cells) > 1:
            table["cells"] = cells
        tables.append(table)
    return sorted(tables, key=lambda t: _first(t["cells"][0] if "cells" in t else t))


def _first(place: Mapping[str, Any]) -> tuple[str, str]:
    return (place.get("parser") or place["parsers"][0], place.get("case") or place["cases"][0])


def _toml_table(header: str, table: Mapping[str, Any]) -> str:
    lines = [header]
    for key, value in table.items():
        if key != "cells":
            lines.append(f"{key} = {_toml_value(value)}")
    for place in table.get("cells", ()):
        lines.append(_toml_table("[[known_broken.cells]]", place))
    return "\n".join(lines) + "\n"


def write(path: Path, engine: str, entries: Iterable[KnownBroken],
          signatures: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> None:
    """Both files: grouped entries, and one signature line per (parser, case, distinct signature)."""
    entries = sorted(entries, key=lambda e: e.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tables = [_toml_table("[[known_broken]]", t) for t in grouped(entries)]
    path.write_text(HEADER.format(engine=engine) + "\n".join(tables), encoding="utf-8")
    lines = []
    for entry in entries:
        groups: dict[str, list[str]] = {}
        for mode in entry.modes:
            recorded = signatures.get((*entry.key, mode))
            if recorded is not None:
                groups.setdefault(json.dumps(recorded, ensure_ascii=False, sort_keys=True), []).append(mode)
        for text, modes in groups.items():
            lines.append(json.dumps({"parser": entry.parser, "case": entry.case, "modes": modes}, ensure_ascii=False)
                         [:-1] + f', "signature": {text}}}')
    signatures_path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def mirror(source: Path, target: Path, engine: str, parsers: set[str]) -> int:
    """Make `target`'s entries and signatures for `parsers` those of `source`, leaving its other entries
    alone: for parsers whose family both vocabulary tiers tokenize alike, triaged once. Returns how many
    (parser, case) entries the target now holds for them."""
    given, kept = load(source), load(target)
    entries = {k: e for k, e in kept.entries.items() if k[0] not in parsers}
    entries |= {k: e for k, e in given.entries.items() if k[0] in parsers}
    signatures = {k: v for k, v in kept.signatures.items() if k[0] not in parsers}
    signatures |= {k: v for k, v in given.signatures.items() if k[0] in parsers}
    if entries != dict(kept.entries) or signatures != dict(kept.signatures):
        write(target, engine, entries.values(), signatures)
    return sum(1 for k in entries if k[0] in parsers)
