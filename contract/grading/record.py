"""A cell's record: what grading and judging one (parser, case, mode) found, as the results file stores it.

Built once (`contract.grading.grader`, `contract.grading.isolation`), judged into a new record
(`contract.expectations.judge`), logged and stored as JSON (`to_json`), read back and validated (`from_json`,
by `reports.load`) with an error naming the cell and the key. Frozen: nothing changes a record after it is
built. The JSON values a record carries whole (the observed message, the input, the expected outcomes, the
signature) are read-only. Standard library and `contract.grading.outcome` only: reports read records without
the grading machinery (the `contract.grading` package imports nothing).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .outcome import Outcome

JSON = Any  # a JSON value, read-only


@dataclass(frozen=True)
class Failure:
    """One failed check of a cell, and what it saw."""

    check: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "detail": self.detail}


def signature(status: str, checks: Iterable[str], observed: Mapping[str, Any] | None) -> dict[str, Any]:
    """What "fails the same way" means: the status, the failed checks and the normalized message."""
    return {"status": status, "checks": sorted(set(checks)), "observed": observed}


class RecordError(ValueError):
    """A stored cell that is not a record; names the key."""


@dataclass(frozen=True, kw_only=True)
class CellRecord:
    """One cell of the matrix (reports/SCHEMA.md, "cells", says what each field means)."""

    engine: str
    parser: str  # engine/name
    family: str | None
    case: str
    kind: str
    mode: str
    tier: str
    vocabulary: str | None
    outcome: Outcome
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    bugs: tuple[str, ...] = ()  # KnownBroken bugs that explain the cell
    reason: str | None = None
    link: str | None = None
    untriaged: bool = False
    diff: str | None = None
    sample: str | None = None  # its key in the results' samples table
    input: JSON = None
    expected: JSON = None
    note: str | None = None
    observed: JSON = None
    chunking: tuple[str, ...] | None = None
    holdback: int | None = None
    withheld: int | None = None
    examples: int | None = None
    duration_s: float = 0.0
    parse_cpu_s: float | None = None
    reference_cpu_s: float | None = None
    slowdown: float | None = None
    error: str | None = None
    signature: JSON = None
    rerun: str | None = None

    @property
    def id(self) -> str:
        """`engine/name:case:mode`, as pytest and the matrix page name the cell."""
        return f"{self.parser}:{self.case}:{self.mode}"

    def to_json(self) -> dict[str, Any]:
        """Every key, as JSON (tuples as lists)."""
        out = dict(self.__dict__)
        out["failures"] = [failure.to_json() for failure in self.failures]
        out["notes"], out["bugs"] = list(self.notes), list(self.bugs)
        if self.chunking is not None:
            out["chunking"] = list(self.chunking)
        return out

    @classmethod
    def from_own_json(cls, raw: Mapping[str, Any]) -> CellRecord:
        """A record from the JSON this run's own processes wrote (`to_json`): converted, not checked again, and
        built without `__init__`'s per-field cost (it is paid twice per cell in every grade)."""
        record = object.__new__(cls)
        values = record.__dict__
        values.update(_DEFAULTS)
        values.update(raw)
        values["outcome"] = Outcome(values["outcome"])
        values["failures"] = tuple(Failure(f["check"], f["detail"]) for f in values["failures"])
        values["notes"], values["bugs"] = tuple(values["notes"]), tuple(values["bugs"])
        if values["chunking"] is not None:
            values["chunking"] = tuple(values["chunking"])
        return record

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> CellRecord:
        """A record from its JSON form; RecordError names the key that is missing, unknown or of the wrong type
        (keys with a default may be left out)."""
        if not isinstance(raw, Mapping):
            raise RecordError(f"expected a JSON object, not {type(raw).__name__}")
        unknown = sorted(raw.keys() - FIELDS.keys())
        if unknown:
            raise RecordError(f"key {unknown[0]!r}: not a key of a cell")
        values: dict[str, Any] = {}
        for name, spec in FIELDS.items():
            if name in raw:
                values[name] = spec.read(name, raw[name])
            elif spec.required:
                raise RecordError(f"key {name!r}: missing")
        return cls(**values)


@dataclass(frozen=True)
class _Field:
    """How one key is read: the JSON types it may hold, and how a list becomes the field's tuple."""

    kinds: tuple[type, ...]
    required: bool
    items: type | None = None  # a tuple field: the type of its items

    def read(self, name: str, value: Any) -> Any:
        if name == "outcome":
            try:
                return Outcome(value)
            except ValueError:
                raise RecordError(f"key 'outcome': {value!r} is not an outcome") from None
        if self.items is not None and isinstance(value, list):
            if self.items is Failure:
                try:
                    return tuple(Failure(str(f["check"]), str(f["detail"])) for f in value)
                except (KeyError, TypeError):
                    raise RecordError(f"key {name!r}: each failure is {{\"check\", \"detail\"}}") from None
            if not all(isinstance(item, self.items) for item in value):
                raise RecordError(f"key {name!r}: expected a list of {self.items.__name__}")
            return tuple(value)
        if not isinstance(value, self.kinds) or (isinstance(value, bool) and bool not in self.kinds):
            wanted = " or ".join("null" if k is type(None) else k.__name__ for k in self.kinds)
            raise RecordError(f"key {name!r}: expected {wanted}, not {value!r:.60}")
        return value


def _field(spec: dataclasses.Field[Any], hint: Any) -> _Field:
    required = spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
    if hint is JSON:
        return _Field((object,), required)
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    kinds: list[type] = []
    items = None
    for option in options:
        if typing.get_origin(option) is tuple:
            kinds.append(list)
            items = typing.get_args(option)[0]
        elif option is float:
            kinds += [float, int]
        elif option is Outcome:
            kinds.append(str)
        else:
            kinds.append(option)
    return _Field(tuple(kinds), required, items)


_HINTS = typing.get_type_hints(CellRecord, localns={"Failure": Failure, "Outcome": Outcome, "JSON": JSON})
FIELDS: dict[str, _Field] = {f.name: _field(f, _HINTS[f.name]) for f in dataclasses.fields(CellRecord)}
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(CellRecord) if f.default is not dataclasses.MISSING}
