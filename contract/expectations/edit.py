"""Edit KnownBroken files in place (`nox -s update_expectations`): what people wrote (ids, reasons, links,
comments, the order of bugs and of their rows) stays as written; only the rows that name a changed cell are
rewritten, and new failures go to untriaged bugs at the end."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Array, InlineTable, Table

from ..grading.outcome import RECORDED
from ..grading.record import CellRecord
from .model import MODE_NAMES, Bug, CellKey, Place, compress_modes, expand_modes
from .read import SCHEMA, load, signatures_path

HEADER = """\
Known-broken cells of engine {engine!r}: one [[bug]] per way its parsers break. `reason` says what the parser
does wrong, once; `cells` say where it shows (rows of parser(s) x case(s) x modes; modes are mode names, tiers
batch / token / char, or "*"); a cell may cite several bugs; `link` points upstream. The observed failures
are in {engine}.signatures.jsonl. `nox -s update_expectations` edits this file in place: it drops cells that
pass now and puts new failures in untriaged bugs at the end (name them, say the reason, delete `untriaged`).
Format: docs/known-broken.md"""
UNTRIAGED = "untriaged"


def places_of(cells: Iterable[CellKey]) -> list[Place]:
    """Cells as few rows as the grouping finds: (parser, case) pairs with the same modes together, parsers with
    the same cases sharing a row; in (parser, case) order. Deterministic."""
    modes_of: dict[tuple[str, str], set[str]] = {}
    for parser, case, mode in cells:
        modes_of.setdefault((parser, case), set()).add(mode)
    by_modes: dict[tuple[str, ...], dict[str, list[str]]] = {}
    for (parser, case), modes in sorted(modes_of.items()):
        by_modes.setdefault(expand_modes(sorted(modes)), {}).setdefault(parser, []).append(case)
    places = []
    for modes, cases_by_parser in by_modes.items():
        by_cases: dict[tuple[str, ...], list[str]] = {}
        for parser, cases in cases_by_parser.items():
            by_cases.setdefault(tuple(cases), []).append(parser)
        places += [Place(tuple(parsers), cases, modes) for cases, parsers in by_cases.items()]
    return sorted(places, key=lambda p: (p.parsers[0], p.cases[0]))


def row(place: Place) -> InlineTable:
    """One `cells` row as the file spells it."""
    table = tomlkit.inline_table()
    table.update({"parser": place.parsers[0]} if len(place.parsers) == 1 else {"parsers": list(place.parsers)})
    table.update({"case": place.cases[0]} if len(place.cases) == 1 else {"cases": list(place.cases)})
    table["modes"] = compress_modes(place.modes)
    return table


def bug_table(bug: Bug, comments: Iterable[str] = ()) -> Table:
    table = tomlkit.table()
    table["id"] = bug.id
    table["reason"] = bug.reason
    if bug.link:
        table["link"] = bug.link
    if bug.untriaged:
        table["untriaged"] = True
    for comment in comments:
        for line in textwrap.wrap(comment, 108):
            table.add(tomlkit.comment(line))
    rows = tomlkit.array()
    rows.extend(row(place) for place in bug.places)
    table["cells"] = rows.multiline(True)
    table.trivia.indent = "\n"  # a blank line before its header
    return table


def new_document(engine: str) -> tomlkit.TOMLDocument:
    document = tomlkit.document()
    for line in HEADER.format(engine=engine).splitlines():
        document.add(tomlkit.comment(line))
    document["schema"] = SCHEMA
    return document


def render(engine: str, bugs: Iterable[tuple[Bug, Iterable[str]]]) -> str:
    """A whole file from bugs (each with comment lines to put above its cells), in the order given."""
    document = new_document(engine)
    for bug, comments in bugs:
        _bugs(document).append(bug_table(bug, comments))
    return tomlkit.dumps(document)


def _bugs(document: tomlkit.TOMLDocument) -> AoT:
    if "bug" not in document:
        document["bug"] = tomlkit.aot()
    return document["bug"]


def _place(raw: Mapping[str, Any]) -> Place:
    parsers = [raw["parser"]] if "parser" in raw else list(raw["parsers"])
    cases = [raw["case"]] if "case" in raw else list(raw["cases"])
    return Place(tuple(parsers), tuple(cases), expand_modes(raw["modes"]))


def drop_cells(document: tomlkit.TOMLDocument, dropped: Callable[[CellKey], bool]) -> int:
    """Take the cells `dropped` picks out of every bug: a row naming one is rewritten as the rows of its other
    cells, in its place; a bug left with no cell goes. Returns how many (bug, cell) citations went."""
    gone = 0
    bugs = _bugs(document)
    for index in reversed(range(len(bugs))):
        rows: Array = bugs[index]["cells"]
        for at in reversed(range(len(rows))):
            place = _place(rows[at])
            cells = list(place.cells())
            kept = [cell for cell in cells if not dropped(cell)]
            if len(kept) == len(cells):
                continue
            gone += len(cells) - len(kept)
            rows.pop(at)
            for offset, rest in enumerate(places_of(kept)):
                rows.insert(at + offset, row(rest))
        if not len(rows):
            bugs.remove(bugs[index])
    return gone


def add_bug(document: tomlkit.TOMLDocument, bug: Bug) -> None:
    """A bug at the end, or its rows added to the bug of that id."""
    bugs = _bugs(document)
    for table in bugs:
        if table["id"] == bug.id:
            table["cells"].extend(row(place) for place in bug.places)
            return
    bugs.append(bug_table(bug))


def _untriaged_bugs(fresh: Mapping[CellKey, Mapping[str, Any]], taken: set[str]) -> list[Bug]:
    """New failures as untriaged bugs: one per parser and set of failed checks."""
    groups: dict[tuple[str, tuple[str, ...]], list[CellKey]] = {}
    for cell, signature in fresh.items():
        groups.setdefault((cell[0], tuple(signature["checks"])), []).append(cell)
    bugs = []
    for (_, checks), cells in sorted(groups.items()):
        number = 1 + sum(1 for bug_id in taken if bug_id.startswith(f"{UNTRIAGED}-"))
        while f"{UNTRIAGED}-{number}" in taken:
            number += 1
        taken.add(f"{UNTRIAGED}-{number}")
        reason = f"untriaged: fails {', '.join(checks) or 'the run'}"
        bugs.append(Bug(f"{UNTRIAGED}-{number}", reason, tuple(places_of(cells)), untriaged=True))
    return bugs


def update(path: Path, engine: str, cells: Iterable[CellRecord]) -> tuple[int, int, int]:
    """Refresh one engine's files from result cells, in place. A cell that passes leaves every bug citing it; a
    failing cell no bug cites joins an untriaged bug; a cited cell's signature is refreshed.
    Returns (cells added, signatures refreshed, cells removed)."""
    known = load(path)
    signatures = dict(known.signatures)
    fixed: set[CellKey] = set()
    fresh: dict[CellKey, Mapping[str, Any]] = {}
    refreshed = 0
    for cell in cells:
        if cell.engine != engine:
            continue
        key = (cell.parser, cell.case, cell.mode)
        if cell.outcome == "fixed" and key in known.cited:
            fixed.add(key)
            signatures.pop(key, None)
        elif cell.outcome in RECORDED:
            current = cell.signature
            if key not in known.cited:
                fresh[key] = current
            elif signatures.get(key) != current:
                refreshed += 1
            signatures[key] = current
    if not fixed and not fresh and not refreshed and path.exists():
        return 0, 0, 0
    document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else new_document(engine)
    drop_cells(document, fixed.__contains__)
    for bug in _untriaged_bugs(fresh, set(known.bugs)):
        add_bug(document, bug)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomlkit.dumps(document), encoding="utf-8")
    write_signatures(path, signatures)
    return len(fresh), refreshed, len(fixed)


def write_signatures(path: Path, signatures: Mapping[CellKey, Mapping[str, Any]]) -> None:
    """One line per (parser, case, distinct signature), with the modes that failed that way; only for cells
    the file's bugs cite."""
    cited = load(path).cited
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    for (parser, case, mode), signature in sorted(signatures.items(), key=lambda item: _order(item[0])):
        if (parser, case, mode) in cited:
            text = json.dumps(signature, ensure_ascii=False, sort_keys=True)
            groups.setdefault((parser, case), {}).setdefault(text, []).append(mode)
    lines = []
    for (parser, case), by_text in sorted(groups.items()):
        for text, modes in by_text.items():
            head = json.dumps({"parser": parser, "case": case, "modes": modes}, ensure_ascii=False)
            lines.append(head[:-1] + f', "signature": {text}}}')
    signatures_path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _order(cell: CellKey) -> tuple[str, str, int]:
    return cell[0], cell[1], MODE_NAMES.index(cell[2])


def mirror(source: Path, target: Path, engine: str, parsers: set[str]) -> int:
    """Make `target`'s bugs and signatures for `parsers` those of `source` (same ids), leaving its other cells
    alone: for parsers whose family both vocabulary tiers tokenize alike, triaged once. Returns how many
    cells the target now cites for them."""
    given, kept = load(source), load(target)
    wanted = {cell: set(bugs) for cell, bugs in given.cited.items() if cell[0] in parsers}
    held = {cell: set(bugs) for cell, bugs in kept.cited.items() if cell[0] in parsers}
    signatures = {k: v for k, v in kept.signatures.items() if k[0] not in parsers}
    signatures |= {k: v for k, v in given.signatures.items() if k[0] in parsers}
    if wanted == held and signatures == dict(kept.signatures):
        return len(wanted)
    document = tomlkit.parse(target.read_text(encoding="utf-8")) if target.exists() else new_document(engine)
    drop_cells(document, lambda cell: cell[0] in parsers)
    for bug in given.bugs.values():
        cells = [cell for cell in bug.cells() if cell[0] in parsers]
        if cells:
            add_bug(document, Bug(bug.id, bug.reason, tuple(places_of(cells)), bug.link, bug.untriaged))
    target.parent.mkdir(parents=True, exist_ok=True)
    # a dropped bug leaves the blank lines around it: collapse them, or every mirror adds one more
    target.write_text(re.sub(r"\n{3,}", "\n\n", tomlkit.dumps(document)), encoding="utf-8")
    write_signatures(target, signatures)
    return len(wanted)
