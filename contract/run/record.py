"""The run's record: when, how, where and on which engine builds a results file was graded (reports/SCHEMA.md,
`run`), and what a merge or a join of shards keeps of the runs behind it.

Built once at the end of a run (`conftest.py`), or by `reports.merge` from the records it merges; stored as
JSON (`to_json`, key for key the schema's), read back and validated (`from_json`, by `reports.load`) with an
error naming the key. Frozen, like the cell record (`contract.grading.record`); standard library and the
small declarations it holds (`Coverage`) only, so reports read it without the grading machinery.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..grading.pipeline import Coverage
from ..grading.record import RecordError

__all__ = ["CitedBug", "EngineRun", "RecordError", "RunRecord"]


@dataclass(frozen=True)
class CitedBug:
    """A KnownBroken bug the engine's cells cite, as the run's expectations file told it."""

    reason: str
    link: str | None = None
    untriaged: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "link": self.link, "untriaged": self.untriaged}


@dataclass(frozen=True, kw_only=True)
class EngineRun:
    """One engine as a run graded it: its version and build, how to rerun a cell, its registry, its bugs."""

    version: str | None = None
    available: bool = True
    build: Mapping[str, Any] | None = None  # `contract.run.provenance.Build` as JSON: what pip installed
    rerun: str | None = None  # the rerun command of its cells, `{parser}`, `{case}`, `{mode}` left open
    skip_reason: str | None = None
    coverage: tuple[Coverage, ...] = ()
    bugs: Mapping[str, CitedBug] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "available": self.available,
                "build": dict(self.build) if self.build is not None else None, "rerun": self.rerun,
                "skip_reason": self.skip_reason, "coverage": [row.to_json() for row in self.coverage],
                "bugs": {bug_id: bug.to_json() for bug_id, bug in self.bugs.items()}}

    @classmethod
    def from_json(cls, raw: Any, where: str) -> EngineRun:
        _object(raw, where)
        coverage = _take(raw, "coverage", (list,), where, ())
        bugs = _take(raw, "bugs", (dict,), where, {})
        return cls(
            version=_take(raw, "version", (str, type(None)), where),
            available=_take(raw, "available", (bool,), where, True),
            build=_take(raw, "build", (dict, type(None)), where),
            rerun=_take(raw, "rerun", (str, type(None)), where),
            skip_reason=_take(raw, "skip_reason", (str, type(None)), where),
            coverage=tuple(_coverage(row, f"{where}.coverage[{n}]") for n, row in enumerate(coverage)),
            bugs={bug_id: _bug(bug, f"{where}.bugs.{bug_id}") for bug_id, bug in bugs.items()},
        )


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """A run (reports/SCHEMA.md, `run`, says what each field means); a merged or joined one lists the runs
    behind it in `runs` (engines side by side) or `shards` (one run graded in parts)."""

    started: str | None
    finished: str | None = None
    duration_s: float | None
    commit: str | None
    command: str | None = None
    hypothesis_profile: str
    vocabulary: str = "synthetic"  # absent from files written before real vocabularies: all were synthetic
    seed: str | int | None = None
    workers: int
    cpu_load: int = 0
    shard: str | None = None
    parser_cpu_s: float | None = None
    python: str | None = None
    platform: str | None = None
    engines: Mapping[str, EngineRun]
    runs: tuple[RunRecord, ...] | None = None
    shards: tuple[RunRecord, ...] | None = None

    @property
    def each(self) -> tuple[RunRecord, ...]:
        """Each engine run behind the record: the merged runs, or the record itself."""
        return self.runs or (self,)

    def to_json(self) -> dict[str, Any]:
        """Every key in the schema's order; `runs` and `shards` only where there are some."""
        out: dict[str, Any] = {}
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if spec.name == "engines":
                out["engines"] = {name: engine.to_json() for name, engine in value.items()}
            elif spec.name in ("runs", "shards"):
                if value is not None:
                    out[spec.name] = [run.to_json() for run in value]
            else:
                out[spec.name] = value
        return out

    @classmethod
    def from_json(cls, raw: Any, where: str = "run") -> RunRecord:
        """A run from its JSON form; RecordError names the key (`run.engines.vllm.version`) that is missing or
        of the wrong type (keys with a default may be left out)."""
        _object(raw, where)
        values: dict[str, Any] = {}
        for name, (kinds, default) in _RUN_KEYS.items():
            values[name] = _take(raw, name, kinds, where, default)
        engines = values["engines"]
        values["engines"] = {name: EngineRun.from_json(info, f"{where}.engines.{name}")
                             for name, info in engines.items()}
        for name in ("runs", "shards"):
            if values[name] is not None:
                values[name] = tuple(cls.from_json(run, f"{where}.{name}[{n}]") for n, run in enumerate(values[name]))
        return cls(**values)


_REQUIRED = object()
_NUMBER = (int, float)
_OPTIONAL_TEXT = (str, type(None))
# key -> (the JSON types it may hold, its default when absent; _REQUIRED: it must be there)
_RUN_KEYS: dict[str, tuple[tuple[type, ...], Any]] = {
    "started": (_OPTIONAL_TEXT, _REQUIRED), "finished": (_OPTIONAL_TEXT, None),
    "duration_s": ((*_NUMBER, type(None)), _REQUIRED), "commit": (_OPTIONAL_TEXT, _REQUIRED),
    "command": (_OPTIONAL_TEXT, None), "hypothesis_profile": ((str,), _REQUIRED), "vocabulary": ((str,), "synthetic"),
    "seed": ((str, int, type(None)), None), "workers": ((int,), _REQUIRED), "cpu_load": ((int,), 0),
    "shard": (_OPTIONAL_TEXT, None), "parser_cpu_s": ((*_NUMBER, type(None)), None), "python": (_OPTIONAL_TEXT, None),
    "platform": (_OPTIONAL_TEXT, None), "engines": ((dict,), _REQUIRED), "runs": ((list, type(None)), None),
    "shards": ((list, type(None)), None),
}
assert list(_RUN_KEYS) == [f.name for f in dataclasses.fields(RunRecord)], "a key per field, in order"


def _object(raw: Any, where: str) -> None:
    if not isinstance(raw, dict):
        raise RecordError(f"key {where!r}: expected a JSON object, not {type(raw).__name__}")


def _take(raw: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str, default: Any = None) -> Any:
    if key not in raw:
        if default is _REQUIRED:
            raise RecordError(f"key '{where}.{key}': missing")
        return default
    value = raw[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        wanted = " or ".join("null" if k is type(None) else _JSON_NAMES.get(k, k.__name__) for k in kinds)
        raise RecordError(f"key '{where}.{key}': expected {wanted}, not {value!r:.60}")
    return value


_JSON_NAMES: dict[type, str] = {dict: "object", list: "array", str: "string", int: "integer", float: "number",
                                bool: "boolean"}


def _coverage(raw: Any, where: str) -> Coverage:
    _object(raw, where)
    families = _take(raw, "families", (list,), where, _REQUIRED)
    if not all(isinstance(name, str) for name in families):
        raise RecordError(f"key '{where}.families': expected an array of strings")
    return Coverage(_take(raw, "kind", (str,), where, _REQUIRED), _take(raw, "name", (str,), where, _REQUIRED),
                    tuple(families), _take(raw, "alias_of", _OPTIONAL_TEXT, where),
                    _take(raw, "reason", _OPTIONAL_TEXT, where))


def _bug(raw: Any, where: str) -> CitedBug:
    _object(raw, where)
    return CitedBug(_take(raw, "reason", (str,), where, _REQUIRED), _take(raw, "link", _OPTIONAL_TEXT, where),
                    _take(raw, "untriaged", (bool,), where, False))

