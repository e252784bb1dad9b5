"""Grading cells in this process: the engine, parser, sample and stream of each, cached; a record each.

Grading loads each engine once per process and turns every outcome, including a crashing adapter, into
a record. It runs in the isolation worker (`contract.grading.isolation`); tests and benchmarks use it directly.
The families it renders samples of are given (`families`), as the plan's are.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cases.catalog import Case, case
from ..cases.family import Family, NotApplicable, Sample, Unimplemented
from ..cases.forced import ForcedText
from ..cases.model import forced
from ..streams.chunking import Mode, deterministic_chunkings, mode
from ..streams.profiles import profile
from ..streams.tokenizer import TokenStream, family_stream
from .adapter import Engine, EngineModule, ParserUnderTest, engine_module
from .cell import REASONING_IN_CONTENT, SLOWDOWN_MODES, Cell, identity, sample_key, settled
from .compare import normalized
from .concurrency import PARTNERS, grade_concurrent
from .outcome import Outcome
from .progress import Call, Progress
from .record import CellRecord, Failure, signature
from .responses import ResponsesView, serves_responses
from .subject import Graded, Subject, grade


@dataclass
class Grader:
    """Grades cells in one process, caching engines, parsers, samples and batch results.

    A record's `outcome` is the graded status until `judge` sets the verdict against expectations
    (that happens in the controlling process, which also records cells whose worker it had to stop).
    """

    hypothesis_profile: str = "ci"
    progress: Progress = field(default_factory=Progress)
    families: Mapping[str, Family] = field(kw_only=True)  # name -> family, as the run's plan has them
    _modules: dict[str, EngineModule] = field(default_factory=dict)
    _engines: dict[str, Engine | str] = field(default_factory=dict)
    _parsers: dict[tuple[str, str], ParserUnderTest | BaseException] = field(default_factory=dict)
    _positions: dict[tuple[str, str], Sample | NotApplicable | Unimplemented] = field(default_factory=dict)
    _streams: dict[tuple[str, str, str], TokenStream] = field(default_factory=dict)
    _subjects: dict[tuple[str, str, str], Subject] = field(default_factory=dict)
    _writings: dict[tuple[str, str], tuple[Sample, str]] = field(default_factory=dict)  # as_written, per group
    _partners: dict[tuple[str, str], Subject] = field(default_factory=dict)  # the concurrent mode's partner requests
    _reference_cpus: dict[tuple[str, str, str, str], float] = field(default_factory=dict)
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)  # sample key -> entry, as graded here
    spent_s: float = 0.0  # CPU time the parsers under test actually spent (a run shared by cells counts once)

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
        key = (family.name, sample.case.id, sample.text)  # the text: a forced choice's shape rewrites it
        if key not in self._streams:
            self._streams[key] = family_stream(family, sample.rendered)
        return self._streams[key]

    def _subject(self, cell: Cell, parser: ParserUnderTest, family: Family, sample: Sample) -> Subject:
        """The subject of the cell's (parser, case) on its mode's surface, kept while its group is graded (its runs
        are shared); on the Responses API the parser is its server's Responses endpoint (`ResponsesView`)."""
        surface = mode(cell.mode).surface
        key = (cell.parser, cell.case, surface)
        if key not in self._subjects:
            if any(known[:2] != key[:2] for known in self._subjects):
                self._subjects.clear()
            served = ResponsesView(parser) if surface == "responses" else parser
            self._subjects[key] = Subject(served, family, sample, self._stream(family, sample), self.progress)
        return self._subjects[key]

    def _written(self, cell: Cell, sample: Sample, variant: str, parser: ParserUnderTest) -> tuple[Sample, str]:
        """`as_written` once per (parser, case), kept while its group is graded: the constraint, and the text it
        has the model write, are the same in every mode (an engine that refuses the request is asked again)."""
        key = (cell.parser, cell.case)
        if key not in self._writings:
            self._writings.clear()
            self._writings[key] = as_written(sample, variant, parser)
        return self._writings[key]

    def grade(self, cell: Cell, announce: Callable[[dict[str, Any]], None] | None = None) -> CellRecord:
        """The cell's record; `announce` gets its fields known so far (what is graded, and the sample) before
        the parser runs."""
        started = time.perf_counter()
        record = identity(cell)  # the record's fields, gathered as grading finds them
        try:
            self._grade_into(cell, record, announce or (lambda record: None))
        except Exception as exc:  # noqa: BLE001 - the framework reports, it does not stop the run
            record.update(outcome="error", error="".join(traceback.format_exception(exc))[-4000:],
                          failures=(Failure("error", f"{type(exc).__name__}: {exc}"),),
                          signature=signature("error", ["error"], None))
        return CellRecord(**{**record, "outcome": Outcome(record["outcome"]),
                             "duration_s": round(time.perf_counter() - started, 4)})

    def _grade_into(self, cell: Cell, record: dict[str, Any], announce: Callable[[dict[str, Any]], None]) -> None:
        the_case = case(cell.case)
        early = settled(cell, self.families)
        if early is not None:
            record.update(early)
            return
        family = self.families[cell.family or ""]
        sample = self._position(family, the_case)
        assert isinstance(sample, Sample)
        engine = self.engine(cell.engine)
        sample, variant = as_graded(sample, engine, cell, family)
        record["sample"] = self._sample_entry(sample, self._stream(family, sample), variant)
        if isinstance(engine, str):
            record.update(outcome="skip", reason=engine)
            return
        parser = self._parser(cell, engine, family)
        if parser is None:
            record.update(outcome="unimplemented", reason=f"engine {engine.name!r} has no parser {cell.parser_name!r}")
            return
        if isinstance(parser, BaseException):
            raise parser
        sample, variant = self._written(cell, sample, variant, parser)
        record["sample"] = self._sample_entry(sample, self._stream(family, sample), variant)
        the_mode = mode(cell.mode)
        if the_mode.surface == "responses" and not serves_responses(parser):
            record.update(outcome="n/a", reason=f"{engine.name} serves {cell.parser_name} on Chat Completions only")
            return
        announce(record)
        subject = self._subject(cell, parser, family, sample)
        subject.cpu_s.update(parse=0.0, stream=0.0)
        spent = subject.spent_s
        if the_mode.isolation:
            partner = self._partner(cell, engine, parser, family)
            if partner is None:
                record.update(outcome="n/a", reason=f"{cell.parser} grades no other case to interleave this one with")
                return
            graded = grade_concurrent(subject, partner, partner.sample.case)
        else:
            graded = grade(subject, the_mode, profile(self.hypothesis_profile),
                           incremental=not engine.holdback_unmeasurable)
        self.spent_s += subject.spent_s - spent
        _record_graded(the_case, graded, record)
        if engine.holdback_unmeasurable and the_mode.streaming:
            record.update(holdback=None, notes=(*record["notes"], "holdback and incremental streaming not "
                                                f"measurable: {engine.holdback_unmeasurable}"))
        record["parse_cpu_s"] = round(sum(subject.cpu_s.values()), 6)
        if engine.name != "reference" and cell.mode in SLOWDOWN_MODES and graded.status != "error":
            own = subject.cpu_s["parse" if the_mode.name == "batch" else "stream"]
            reference = self._reference_cpu(subject, the_mode)
            record.update(reference_cpu_s=round(reference, 6), slowdown=round(own / max(reference, 1e-6), 1))

    def _partner(self, cell: Cell, engine: Engine, parser: ParserUnderTest, family: Family) -> Subject | None:
        """The request the concurrent mode interleaves with the cell's: the first of `PARTNERS` the parser
        grades, other than the cell's case (its subject kept for every cell of the parser)."""
        partner = partner_case(cell, self.families)
        if partner is None:
            return None
        key = (cell.parser, partner)
        if key not in self._partners:
            self._partners.clear()  # one parser's at a time, as its groups are graded
            sample = self._position(family, case(partner))
            assert isinstance(sample, Sample)
            sample, _ = as_graded(sample, engine, dataclasses.replace(cell, case=partner), family)
            self._partners[key] = Subject(parser, family, sample, self._stream(family, sample), self.progress)
        return self._partners[key]

    def _sample_entry(self, sample: Sample, stream: TokenStream, variant: str) -> str:
        """The key of the sample in the results' samples table; its entry is added to `samples` once."""
        key = sample_key(sample.family, sample.case.id, variant)
        if key not in self.samples:
            self.samples[key] = {"family": sample.family, "case": sample.case.id, "variant": variant or None,
                                 "input": _input(sample, stream), "expected": sample.expected.to_json(),
                                 "note": sample.note or None}
        return key

    def _reference_cpu(self, subject: Subject, the_mode: Mode) -> float:
        """CPU seconds the reference parser of the subject's family needs for the same input in that mode
        (measured once per input in this worker, whichever parsers of the family it is set against)."""
        key = (subject.family.name, subject.sample.case.id, subject.sample.text, the_mode.name)
        if key not in self._reference_cpus:
            reference = self.engine("reference")
            assert isinstance(reference, Engine), reference
            parser = reference.factories[subject.family.name](subject.family)
            twin = Subject(parser, subject.family, subject.sample, subject.stream)
            if not the_mode.streaming:
                twin.parse()
            else:
                for chunks in deterministic_chunkings(the_mode, subject.stream, subject.family.markers):
                    twin.run(chunks)
            self._reference_cpus[key] = twin.spent_s
        return self._reference_cpus[key]


def partner_case(cell: Cell, families: Mapping[str, Family]) -> str | None:
    """The case the concurrent mode interleaves the cell's with: the first of `PARTNERS` the cell's parser grades,
    other than the cell's own."""
    for partner in PARTNERS:
        if partner != cell.case and settled(dataclasses.replace(cell, case=partner), families) is None:
            return partner
    return None


def as_graded(sample: Sample, engine: Engine | str, cell: Cell, family: Family) -> tuple[Sample, str]:
    """The sample as the cell's parser is graded on it, and its variant: append-think parsers keep the think
    block in content."""
    if isinstance(engine, Engine) and cell.parser_name in engine.reasoning_in_content and family.reasoning:
        return sample.with_reasoning_in_content(family.reasoning), REASONING_IN_CONTENT
    return sample, ""


def as_written(sample: Sample, variant: str, parser: ParserUnderTest) -> tuple[Sample, str]:
    """The sample as the model writes it for this parser: under a forced tool_choice, in the shape the parser's
    engine constrains the output to (`ParserUnderTest.forced_text`; native where the adapter does not say)."""
    if not forced(sample.context.tool_choice):
        return sample, variant
    written_in = getattr(parser, "forced_text", None)
    shape = written_in(sample) if written_in is not None else ForcedText.NATIVE
    if shape is ForcedText.NATIVE:
        return sample, variant
    return sample.written_as(shape), "+".join(filter(None, (variant, shape.variant)))


def _record_graded(the_case: Case, graded: Graded, record: dict[str, Any]) -> None:
    observed = graded.observed
    record.update(
        outcome=graded.status,
        failures=graded.failures,
        notes=graded.notes,
        observed=observed.to_json() if observed is not None else None,
        chunking=graded.chunking,
        holdback=graded.holdback,
        withheld=graded.withheld,
        examples=graded.examples,
        error=graded.error,
        signature=None if graded.status == "pass" else signature(
            graded.status, graded.checks_failed,
            normalized(observed, keep_ids=the_case.native_ids) if observed is not None else None),
    )


def _input(sample: Sample, stream: TokenStream) -> dict[str, Any]:
    return {"text": sample.text, "token_ids": list(stream.ids), "context": sample.context.to_json(),
            "stop": sample.stop}
