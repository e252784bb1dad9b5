"""The results file's layout (reports/SCHEMA.md): what repeats is stored once, and read back whole.

The writer (`contract.run.results.write`) compacts a document; the reader (`reports.load.load_results`) expands one:
reports depend on the core, never the reverse.

Schema 2 and 3 (3 adds the KnownBroken bugs cells cite) store once what many cells share, and leave out of
each cell what can be told from elsewhere:

- the model text, token ids, request and expected outcomes of a (family, case) live in a `samples` table
  that cells name by key (`family:case`, `:reasoning-in-content` for the append-think form), the request
  and the expected outcomes as indexes into `values` (many families share a case's request);
- every distinct failure signature, failure list, note list and reason, and every long text of an observed
  message (a 16 KiB argument comes back in every mode), lives in a `values` table that cells point into;
- a chunking is stored as the offsets where it cuts the sample's text (its deltas are that text, cut);
- keys whose value the rest of the file tells (the engine, family, kind, tier, vocabulary, sample and rerun
  command of a cell, from the parsers, cases, families and samples tables and each engine's rerun
  template) and keys at
  their default (below) are left out, as is the observed message of a passing cell (it matches the
  expected outcome, and its notes say how).

`expand` turns a file of either schema into the same in-memory form (every cell with every key, `input`,
`expected` and `note` included), so nothing that reads results needs to know how they were stored;
`compact` is its inverse for the writer (it writes the current schema). Values shared between cells are shared objects: read-only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SCHEMA = 3  # 3: cells cite KnownBroken bugs (`bugs`), each engine lists the bugs its cells cite
READABLE = (1, 2, 3)

# cell keys a schema-2 or -3 file may leave out, and the value they then have
CELL_DEFAULTS: dict[str, Any] = {
    "failures": [], "notes": [], "bugs": [], "reason": None, "link": None, "untriaged": False, "diff": None, "sample": None,
    "observed": None, "chunking": None, "holdback": None, "withheld": None, "examples": None, "duration_s": 0.0,
    "parse_cpu_s": None, "reference_cpu_s": None, "slowdown": None, "error": None, "signature": None,
    "rerun": None,
}
FROM_SAMPLE = ("input", "expected", "note")  # cell keys read from the sample it names (kept in a cell naming none)
SHARED = ("signature", "failures", "notes", "reason")  # stored as an index into `values`
LONG = 256  # an observed text at least this long is stored once, in `values`
TIER_OF_MODE = {"batch": "batch", "chars": "char"}  # every other mode streams on token boundaries


def rerun_of(template: str, parser: str, case: str, mode: str) -> str:
    """The rerun command of a cell from its engine's template."""
    return template.replace("{parser}", parser).replace("{case}", case).replace("{mode}", mode)


class _Tables:
    """What a document tells about its cells besides the cells themselves."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.parsers = {p["parser"]: p for p in document["parsers"]}
        self.kinds = {c["id"]: c["kind"] for c in document["cases"]}
        self.vocabularies = {f["name"]: f.get("vocabulary") for f in document["families"]}
        self.templates = {name: e.get("rerun") for name, e in document["run"]["engines"].items()}
        self.samples = document.get("samples", {})

    def derived(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        """Cell key -> its value as the rest of the document tells it (from the cell's parser, case, mode)."""
        return {
            "engine": lambda c: (self.parsers.get(c["parser"]) or {}).get("engine"),
            "family": lambda c: (self.parsers.get(c["parser"]) or {}).get("family"),
            "kind": lambda c: self.kinds.get(c["case"]),
            "tier": lambda c: TIER_OF_MODE.get(c["mode"], "token"),
            "vocabulary": lambda c: self.vocabularies.get(c.get("family") or "") if c.get("family") else None,
            "rerun": lambda c: rerun_of(self.templates[c["engine"]], c["parser"], c["case"], c["mode"])
            if self.templates.get(c["engine"]) else None,
            "sample": lambda c: f"{c.get('family')}:{c['case']}" if f"{c.get('family')}:{c['case']}" in self.samples
            else None,
        }

    def text(self, cell: dict[str, Any]) -> str | None:
        sample = self.samples.get(cell.get("sample") or "")
        return sample["input"]["text"] if sample else None


class _Values:
    """The `values` table as the writer fills it: each distinct value once."""

    def __init__(self) -> None:
        self.table: list[Any] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: Any) -> int:
        key = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if key not in self._index:
            self._index[key] = len(self.table)
            self.table.append(value)
        return self._index[key]


def compact(document: dict[str, Any]) -> dict[str, Any]:
    """A whole document (cells with every key) as a file of the current schema stores it."""
    tables = _Tables(document)
    derived = tables.derived()
    values = _Values()
    cells = []
    for cell in document["cells"]:
        stored: dict[str, Any] = {}
        for key, value in cell.items():
            if key in derived:
                if value == derived[key](cell):
                    continue
            elif (key in FROM_SAMPLE and (cell.get("sample") or value is None)) or (
                    key in CELL_DEFAULTS and _is_default(key, value)):
                continue
            if key == "observed":
                if cell["outcome"] == "pass":  # matches the expected outcome: nothing reads it
                    continue
                value = _observed_stored(value, values)
            elif key == "chunking":
                value = _cuts(value, tables.text(cell))
            elif key in SHARED:
                value = values(value)
            stored[key] = value
        cells.append(stored)
    samples = {key: {**sample, "input": {**sample["input"], "context": values(sample["input"]["context"])},
                     "expected": values(sample["expected"])} for key, sample in tables.samples.items()}
    return {**document, "schema": SCHEMA, "samples": samples, "values": values.table, "cells": cells}


def expand(document: dict[str, Any]) -> dict[str, Any]:
    """A document of either schema with every cell whole; ValueError names the cell that cannot be read."""
    if document["schema"] == 1:
        return {**document, "samples": {}, "cells": [{**_defaults(), **cell} for cell in document["cells"]]}
    values = document["values"]
    try:
        samples = {key: {**sample, "input": {**sample["input"], "context": values[sample["input"]["context"]]},
                         "expected": values[sample["expected"]]} for key, sample in document["samples"].items()}
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"bad field 'samples': {type(exc).__name__}: {exc}") from None
    document = {**document, "samples": samples}
    tables = _Tables(document)
    derived = tables.derived()
    cells = []
    for index, cell in enumerate(document["cells"]):
        try:
            cells.append(_whole(cell, tables, derived, values))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ValueError(f"bad field 'cells[{index}]': {type(exc).__name__}: {exc}") from None
    return {**document, "cells": cells}


def _whole(cell: dict[str, Any], tables: _Tables, derived: dict[str, Callable[[dict[str, Any]], Any]],
           values: list[Any]) -> dict[str, Any]:
    """One stored cell with every key."""
    whole = {**_defaults(), **cell}
    for key in ("engine", "family", "kind", "tier", "vocabulary", "rerun", "sample"):  # later ones use earlier
        if key not in cell:
            whole[key] = derived[key](whole)
    for key in SHARED:
        if key in cell:
            whole[key] = values[cell[key]]
    if cell.get("observed") is not None:
        whole["observed"] = _observed_read(cell["observed"], values)
    if cell.get("chunking") is not None:
        whole["chunking"] = _texts(cell["chunking"], tables.text(whole))
    if whole["sample"] is not None:
        sample = tables.samples[whole["sample"]]
        whole.update({key: sample.get(key) for key in FROM_SAMPLE})
    return whole


def _observed_stored(observed: dict[str, Any], values: _Values) -> dict[str, Any]:
    """Long texts (content, reasoning, call arguments) as `{"value": index}`."""
    def text(value: Any) -> Any:
        return {"value": values(value)} if isinstance(value, str) and len(value) >= LONG else value

    stored = {key: text(value) for key, value in observed.items()}
    stored["tool_calls"] = [{key: text(value) for key, value in call.items()} for call in observed["tool_calls"]]
    return stored


def _observed_read(stored: dict[str, Any], values: list[Any]) -> dict[str, Any]:
    def text(value: Any) -> Any:
        return values[value["value"]] if isinstance(value, dict) else value

    observed = {key: text(value) for key, value in stored.items()}
    observed["tool_calls"] = [{key: text(value) for key, value in call.items()} for call in stored["tool_calls"]]
    return observed


def _cuts(chunking: list[str], text: str | None) -> list[int] | list[str]:
    """A chunking that cuts the sample's text as the offsets of its cuts (the deltas otherwise)."""
    if text is None or "".join(chunking) != text:
        return chunking
    offsets, end = [], 0
    for delta in chunking[:-1]:
        end += len(delta)
        offsets.append(end)
    return offsets


def _texts(stored: list[int] | list[str], text: str | None) -> list[str]:
    """The deltas of a stored chunking (cut offsets into the sample's text, or the deltas themselves)."""
    if stored and isinstance(stored[0], str):
        return list(stored)  # type: ignore[arg-type]
    if text is None:
        raise ValueError("a chunking stored as cut offsets needs its cell's sample")
    edges = [0, *stored, len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def _is_default(key: str, value: Any) -> bool:
    default = CELL_DEFAULTS[key]
    return value == default and type(value) is type(default)


def _defaults() -> dict[str, Any]:
    fresh = {key: list(value) if isinstance(value, list) else value for key, value in CELL_DEFAULTS.items()}
    return {**fresh, **dict.fromkeys(FROM_SAMPLE)}
