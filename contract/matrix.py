"""The matrix: which cells a run has, and grading one cell into a results record.

A cell is (parser under test, case, mode). Planning needs no engine import; grading loads each
engine once per process and turns every outcome, including a crashing adapter, into a record.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixtures import all_families

from . import expectations
from .adapter import Engine, EngineModule, ParserUnderTest, engine_module
from .catalog import CATALOG, Case, case
from .chunking import MODES, Mode, deterministic_chunkings, mode
from .compare import normalized
from .family import Family, NotApplicable, Sample, Unimplemented
from .grading import Graded, Subject, grade
from .profiles import profile
from .progress import Call, Progress
from .tokenizer import TokenStream, family_stream, vocabulary_label


@dataclass(frozen=True)
class Cell:
    engine: str  # the engine spec given on the command line (name or module path)
    engine_name: str
    parser_name: str
    family: str | None  # None: the parser maps to no family fixture
    case: str
    mode: str

    @property
    def parser(self) -> str:
        return f"{self.engine_name}/{self.parser_name}"

    @property
    def id(self) -> str:
        return f"{self.parser}:{self.case}:{self.mode}"


def plan(
    engines: Sequence[str],
    families: Iterable[str] | None = None,
    modes: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
) -> list[Cell]:
    """Every cell of the run, in a stable order (identical in every xdist worker)."""
    wanted_families = set(families) if families else None
    wanted_modes = [mode(m) for m in modes] if modes else list(MODES)
    wanted_cases = [case(c) for c in cases] if cases else list(CATALOG)
    cells: list[Cell] = []
    for spec in engines:
        module = engine_module(spec)
        for parser_name, family in graded_mapping(module).items():
            if wanted_families is not None and family not in wanted_families:
                continue
            for c in wanted_cases:
                for m in wanted_modes if family else [mode("batch")]:
                    cells.append(Cell(spec, module.name, parser_name, family, c.id, m.name))
    return cells


SLOWDOWN_MODES = ("batch", "tokens")  # where a parser's CPU time is set against the reference parser's
GRADED = ("pass", "fail", "error", "timeout")  # statuses a KnownBroken entry can speak to


def graded_mapping(module: EngineModule) -> dict[str, str | None]:
    """Parser name -> family for every parser the engine module grades (the reference engine owes one
    to every family)."""
    if module.name == "reference":
        return {name: name for name in all_families()} | dict(module.mapping)
    return dict(module.mapping)


def parser_names(module: EngineModule) -> set[str]:
    """Every `engine/name` the engine module grades."""
    return {f"{module.name}/{name}" for name in graded_mapping(module)}


@dataclass
class Grader:
    """Grades cells in one process, caching engines, parsers, samples and batch results.

    A record's `outcome` is the graded status until `judge` sets the verdict against expectations
    (that happens in the controlling process, which also records cells whose worker it had to stop).
    """

    hypothesis_profile: str = "ci"
    progress: Progress = field(default_factory=Progress)
    _modules: dict[str, EngineModule] = field(default_factory=dict)
    _engines: dict[str, Engine | str] = field(default_factory=dict)
    _parsers: dict[tuple[str, str], ParserUnderTest | BaseException] = field(default_factory=dict)
    _positions: dict[tuple[str, str], Sample | NotApplicable | Unimplemented] = field(default_factory=dict)
    _streams: dict[tuple[str, str], TokenStream] = field(default_factory=dict)
    _subjects: dict[tuple[str, str], Subject] = field(default_factory=dict)

    def module(self, spec: str) -> EngineModule:
        if spec not in self._modules:
            self._modules[spec] = engine_module(spec)
        return self._modules[spec]

    def engine(self, spec: str) -> Engine | str:
        if spec not in self._engines:
            self.progress.enter(Call.LOAD)
            try:
                self._engines[spec] = self.module(spec).load()
            finally:
                self.progress.leave()
        return self._engines[spec]

    def _parser(self, cell: Cell, engine: Engine, family: Family) -> ParserUnderTest | BaseException | None:
        key = (cell.engine, cell.parser_name)
        if key not in self._parsers:
            factory = engine.factories.get(cell.parser_name)
            if factory is None:
                return None
            self.progress.enter(Call.BUILD)
            try:
                self._parsers[key] = factory(family)
            except Exception as exc:  # noqa: BLE001 - an adapter that cannot build is an outcome
                self._parsers[key] = exc
            finally:
                self.progress.leave()
        return self._parsers[key]

    def _position(self, family: Family, the_case: Case) -> Sample | NotApplicable | Unimplemented:
        """The family's position on the case, rendered once per process, not once per mode."""
        key = (family.name, the_case.id)
        if key not in self._positions:
            self._positions[key] = family.sample(the_case)
        return self._positions[key]

    def _stream(self, family: Family, sample: Sample) -> TokenStream:
        key = (family.name, sample.case.id)
        if key not in self._streams:
            self._streams[key] = family_stream(family, sample.rendered)
        return self._streams[key]

    def _subject(self, cell: Cell, parser: ParserUnderTest, family: Family, sample: Sample) -> Subject:
        key = (cell.parser, cell.case)
        if key not in self._subjects:
            self._subjects[key] = Subject(parser, family, sample, self._stream(family, sample), self.progress)
        return self._subjects[key]

    def grade(self, cell: Cell, announce: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """The cell's record; `announce` gets it once the input is known, before the parser runs."""
        started = time.perf_counter()
        record = _base_record(cell)
        try:
            self._grade_into(cell, record, announce or (lambda record: None))
        except Exception as exc:  # noqa: BLE001 - the framework reports, it does not stop the run
            record.update(outcome="error", error="".join(traceback.format_exception(exc))[-4000:],
                          failures=[{"check": "error", "detail": f"{type(exc).__name__}: {exc}"}],
                          signature=expectations.signature("error", ["error"], None))
        record["duration_s"] = round(time.perf_counter() - started, 4)
        return record

    def _grade_into(self, cell: Cell, record: dict[str, Any], announce: Callable[[dict[str, Any]], None]) -> None:
        the_case = case(cell.case)
        if cell.family is None:
            record.update(outcome="unimplemented", reason=f"{cell.parser} maps to no family fixture")
            return
        family = all_families().get(cell.family)
        if family is None:
            record.update(outcome="unimplemented", reason=f"{cell.parser} maps to family {cell.family!r}, which has no fixture")
            return
        position = self._position(family, the_case)
        if isinstance(position, NotApplicable):
            record.update(outcome="n/a", reason=position.reason)
            return
        if isinstance(position, Unimplemented):
            record.update(outcome="unimplemented", reason=position.reason)
            return
        sample = position
        engine = self.engine(cell.engine)
        if isinstance(engine, Engine) and cell.parser_name in engine.reasoning_in_content and family.reasoning:
            sample = sample.with_reasoning_in_content(family.reasoning)
        stream = self._stream(family, sample)
        record.update(input=_input(sample, stream), expected=sample.expected.to_json(), note=sample.note or None)
        if isinstance(engine, str):
            record.update(outcome="skip", reason=engine)
            return
        parser = self._parser(cell, engine, family)
        if parser is None:
            record.update(outcome="unimplemented", reason=f"engine {engine.name!r} has no parser {cell.parser_name!r}")
            return
        if isinstance(parser, BaseException):
            raise parser
        announce(record)
        subject = self._subject(cell, parser, family, sample)
        subject.cpu_s.update(parse=0.0, stream=0.0)
        the_mode = mode(cell.mode)
        graded = grade(subject, the_mode, profile(self.hypothesis_profile),
                       incremental=not engine.holdback_unmeasurable)
        _record_graded(the_case, graded, record)
        if engine.holdback_unmeasurable and the_mode.streaming:
            record.update(holdback=None, notes=[*record["notes"], f"holdback and incremental streaming not measurable: {engine.holdback_unmeasurable}"])
        record["parse_cpu_s"] = round(sum(subject.cpu_s.values()), 6)
        if engine.name != "reference" and cell.mode in SLOWDOWN_MODES and graded.status != "error":
            own = subject.cpu_s["parse" if the_mode.name == "batch" else "stream"]
            reference = self._reference_cpu(subject, the_mode)
            record.update(reference_cpu_s=round(reference, 6), slowdown=round(own / max(reference, 1e-6), 1))
        if record["outcome"] == "pass":  # ids are reproducible from the family tokenizer; keep them as evidence
            record["input"]["token_ids"] = None

    def _reference_cpu(self, subject: Subject, the_mode: Mode) -> float:
        """CPU seconds the reference parser of the subject's family needs for the same input in that mode."""
        reference = self.engine("reference")
        assert isinstance(reference, Engine), reference
        parser = reference.factories[subject.family.name](subject.family)
        twin = Subject(parser, subject.family, subject.sample, subject.stream)
        if not the_mode.streaming:
            twin.parse()
            return twin.cpu_s["parse"]
        for chunks in deterministic_chunkings(the_mode, subject.stream, subject.family.markers):
            twin.run(chunks)
        return twin.cpu_s["stream"]


def _record_graded(the_case: Case, graded: Graded, record: dict[str, Any]) -> None:
    observed = graded.observed
    record.update(
        outcome=graded.status,
        failures=[f.to_json() for f in graded.failures],
        notes=list(graded.notes),
        observed=observed.to_json() if observed is not None else None,
        chunking=list(graded.chunking) if graded.chunking is not None else None,
        holdback=graded.holdback,
        withheld=graded.withheld,
        examples=graded.examples,
        error=graded.error,
        signature=None if graded.status == "pass" else expectations.signature(
            graded.status, graded.checks_failed,
            normalized(observed, keep_ids=the_case.native_ids) if observed is not None else None),
    )


def judge(record: dict[str, Any], known: expectations.Expectations,
          other_tier: tuple[str, expectations.Expectations] | None = None) -> dict[str, Any]:
    """Turn a graded status into the cell's verdict against what is known about it (xfail, fixed, changed);
    with the other vocabulary tier's expectations, a note says which tier a failure needs."""
    status = record["outcome"]
    if status not in GRADED:
        return record
    graded_on = all_families().get(record["family"] or "")
    if other_tier is not None and graded_on is not None and graded_on.vocabulary is not None:
        note = _tier_note(status != "pass", *other_tier, record)
        if note:
            record["notes"] = [*record["notes"], note]
    entry = known.lookup(record["parser"], record["case"], record["mode"])
    recorded = known.recorded(record["parser"], record["case"], record["mode"])
    verdict = expectations.resolve(status, record["signature"] or {}, entry, recorded)
    record.update(outcome=verdict.outcome, diff=verdict.diff)
    if entry is not None:
        record.update(reason=entry.reason, link=entry.link or None, untriaged=entry.untriaged)
    if verdict.outcome == "fixed":
        assert entry is not None
        record["reason"] = f"known broken ({entry.reason}) but passes now: remove this mode from the entry"
    return record


def _tier_note(failing: bool, tier: str, other: expectations.Expectations, record: dict[str, Any]) -> str | None:
    """Whether the cell fails on the other vocabulary tier too (each tier is triaged in full)."""
    there = other.lookup(record["parser"], record["case"], record["mode"]) is not None
    if failing:
        return (f"vocabulary: known broken on the {tier} tier too" if there else
                f"vocabulary: fails on {record['vocabulary']} only; passes on the {tier} tier")
    return (f"vocabulary: passes on {record['vocabulary']}; known broken on the {tier} tier only "
            f"(--vocabulary {tier} shows it)") if there else None


def _input(sample: Sample, stream: TokenStream) -> dict[str, Any]:
    return {"text": sample.text, "token_ids": list(stream.ids), "context": sample.context.to_json(),
            "stop": sample.stop}


def _base_record(cell: Cell) -> dict[str, Any]:
    the_case = case(cell.case)
    the_mode: Mode = mode(cell.mode)
    return {
        "engine": cell.engine_name, "parser": cell.parser, "family": cell.family, "case": cell.case,
        "kind": the_case.kind, "mode": cell.mode, "tier": the_mode.tier,
        "vocabulary": vocabulary_label(all_families()[cell.family]) if cell.family in all_families() else None,
        "outcome": None, "failures": [],
        "notes": [], "reason": None, "link": None, "untriaged": False, "diff": None, "input": None,
        "expected": None, "observed": None, "chunking": None, "holdback": None, "withheld": None, "examples": None,
        "duration_s": 0.0, "parse_cpu_s": None, "reference_cpu_s": None, "slowdown": None, "error": None,
        "signature": None, "note": None, "rerun": None,
    }
