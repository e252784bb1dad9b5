"""Read one engine's KnownBroken files (`<engine>.toml`, `<engine>.signatures.jsonl`), validated: a bad file
stops the run with one line naming the file, the bug and the key."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cases.catalog import CATALOG
from .model import NONE, Bug, CellKey, Expectations, Place, expand_modes

SCHEMA = 3
BUG_ID = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
BUG_KEYS: dict[str, type | tuple[type, ...]] = {"id": str, "reason": str, "link": str, "untriaged": bool,
                                                "cells": list}
PLACE_KEYS: dict[str, type | tuple[type, ...]] = {"parser": str, "parsers": list, "case": str, "cases": list,
                                                  "modes": (str, list)}
# a reason says what the parser does wrong, once; where it shows is what its cells say, so a reason names no
# mode, no tier and no list of them (it may say which code path goes wrong: "batch drops …, streaming keeps …")
RESTATED_MODES = re.compile(
    r"\bbursts\b|\bbursts-\d|\bboundaries\b|\bchars\b|\b(?:char|token|batch) tier\b|\bevery streaming mode\b"
    r"|\b(?:whole|tokens|random|batch)\s*/|/\s*(?:whole|tokens|random|batch)\b"
    r"|^(?:batch|streaming)(?: \([^)]*\))?:", re.IGNORECASE | re.MULTILINE)


class ExpectationError(ValueError):
    """An expectations file that cannot be used; names the file, the bug and the key."""


def signatures_path(path: Path) -> Path:
    """`vllm.toml` -> `vllm.signatures.jsonl`."""
    return path.with_name(path.stem + ".signatures.jsonl")


def load(path: Path, parsers: set[str] | None = None) -> Expectations:
    """One engine's expectations, validated; a missing file has none.

    `parsers`: the engine's parser names (`engine/name`); a bug naming another is an error.
    """
    if not path.exists():
        return NONE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationError(f"{path}: not valid TOML: {exc}") from exc
    if "known_broken" in data:
        raise ExpectationError(f"{path}: [[known_broken]] entries are the old form; this reader takes schema "
                               f"{SCHEMA}: [[bug]] tables (docs/known-broken.md)")
    if data.get("schema") != SCHEMA:
        raise ExpectationError(f"{path}: key 'schema': {data.get('schema')!r}, expected {SCHEMA}")
    for key in data:
        if key not in ("schema", "bug"):
            raise ExpectationError(f"{path}: unknown table or key {key!r}; the file holds schema and [[bug]] tables")
    raw_bugs = data.get("bug", [])
    if not isinstance(raw_bugs, list):
        raise ExpectationError(f"{path}: 'bug' must be an array of tables ([[bug]])")
    bugs: dict[str, Bug] = {}
    cited: dict[CellKey, tuple[str, ...]] = {}
    for n, raw in enumerate(raw_bugs):
        bug = _bug(path, n, raw, path.stem, parsers)
        if bug.id in bugs:
            raise ExpectationError(f"{path}: bug[{n}]: key 'id': {bug.id!r} names an earlier bug too")
        bugs[bug.id] = bug
        for cell in bug.cells():
            cited[cell] = (*cited.get(cell, ()), bug.id)
    return Expectations(bugs, cited, _signatures(signatures_path(path), cited))


def _bug(path: Path, n: int, raw: Any, engine: str, parsers: set[str] | None) -> Bug:
    where = f"{path}: bug[{n}]"
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: not a table")
    if isinstance(raw.get("id"), str):
        where = f"{path}: bug {raw['id']!r}"
    _check_keys(where, raw, BUG_KEYS)
    for key in ("id", "reason", "cells"):
        if key not in raw:
            raise ExpectationError(f"{where}: key {key!r} is missing")
    if not BUG_ID.match(raw["id"]):
        raise ExpectationError(f"{where}: key 'id': {raw['id']!r} is not an id (lowercase letters, digits, "
                               "'.', '_', '-')")
    reason, link, untriaged = raw["reason"].strip(), raw.get("link", ""), raw.get("untriaged", False)
    if not reason:
        raise ExpectationError(f"{where}: key 'reason' is empty: say what the parser does wrong")
    restated = RESTATED_MODES.search(reason)
    if restated and not untriaged:
        raise ExpectationError(f"{where}: key 'reason' restates modes ({restated.group(0)!r}): say what the "
                               "parser does wrong; its cells say where it shows")
    if link and not link.startswith(("https://", "http://")):
        raise ExpectationError(f"{where}: key 'link' is not an http(s) URL: {link!r}")
    if not raw["cells"]:
        raise ExpectationError(f"{where}: key 'cells' is empty")
    places = tuple(_place(f"{where} cells[{m}]", row, engine, parsers) for m, row in enumerate(raw["cells"]))
    seen: set[CellKey] = set()
    for m, place in enumerate(places):
        twice = seen.intersection(place.cells())
        if twice:
            raise ExpectationError(f"{where} cells[{m}]: cell {':'.join(min(twice))} is in an earlier row too")
        seen.update(place.cells())
    return Bug(raw["id"], reason, places, link, untriaged)


def _place(where: str, raw: Any, engine: str, parsers: set[str] | None) -> Place:
    """One `cells` row: the parsers, cases and modes it names, checked against what exists."""
    if not isinstance(raw, dict):
        raise ExpectationError(f"{where}: not a table")
    _check_keys(where, raw, PLACE_KEYS)
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
    return Place(tuple(names), tuple(case_ids), modes)


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


def _check_keys(where: str, raw: Mapping[str, Any], allowed: Mapping[str, Any]) -> None:
    for key in raw:
        if key not in allowed:
            raise ExpectationError(f"{where}: unknown key {key!r}; keys are {', '.join(allowed)}")
    for key, kind in allowed.items():
        if key in raw and not isinstance(raw[key], kind):
            raise ExpectationError(f"{where}: key {key!r} has the wrong type: {raw[key]!r}")


def _signatures(path: Path, cited: Mapping[CellKey, tuple[str, ...]]) -> dict[CellKey, Mapping[str, Any]]:
    """Recorded signatures of cited cells; lines for cells no bug cites are ignored (the next `update`
    drops them)."""
    if not path.exists():
        return {}
    out: dict[CellKey, Mapping[str, Any]] = {}
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
        for mode in modes:
            if (parser, case_id, mode) in cited:
                out[(parser, case_id, mode)] = signature
    return out
