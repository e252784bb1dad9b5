"""Grade one parser on one sample in one mode: run it, apply the checks, keep the evidence.

A parser that raises is `error` and never escapes this module; one that hangs, crashes the
interpreter or exhausts memory is stopped from outside (`contract.grading.isolation`), which reads what it
was doing from the subject's `Progress`. Generated modes try the chunkings hypothesis draws from the input
(under the derandomized `ci` profile drawn once and stored, `contract.streams.drawn`) and keep the first failing one;
a profile that is not derandomized searches live and shrinks a failure to a minimal chunking.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, seed
from hypothesis import settings as Settings

from ..cases.family import Family, Sample
from ..cases.model import Chunk, Message
from ..streams.chunking import Mode, char_chunks, deterministic_chunkings, token_chunks
from ..streams.drawn import Draw, draw_of, drawn
from ..streams.tokenizer import TokenStream
from . import checks
from .adapter import ParserUnderTest
from .checks import Failure, StreamRun
from .progress import Call, Progress


@dataclass(frozen=True)
class Graded:
    status: str  # pass | fail | error (a hang is stopped from outside: see contract.grading.isolation)
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    observed: Message | None = None
    chunking: tuple[str, ...] | None = None
    holdback: int | None = None
    examples: int | None = None
    error: str | None = None
    withheld: int | None = None  # incremental streaming: most payload held at a chunk boundary (checks.withheld)

    @property
    def checks_failed(self) -> list[str]:
        return sorted({f.check for f in self.failures})


@dataclass(frozen=True)
class Streamed:
    """One chunking streamed through the parser and judged: what a cell needs of that run."""

    texts: tuple[str, ...]
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    observed: Message | None = None
    holdback: int = 0
    withheld: tuple[int, int] = (0, -1)  # checks.withheld: most payload held, and after which chunk
    error: BaseException | None = None  # the parser raised
    cpu_s: float = 0.0  # the parser's CPU time in this run


@dataclass(frozen=True)
class Anatomy:
    """Where a sample's payload lies, as the checks look for it."""

    pieces: tuple[str, ...]  # narration, reasoning and argument pieces that must survive (conservation)
    payload: tuple[tuple[int, int], ...]  # narration, reasoning and arguments (incremental)
    visible: tuple[tuple[int, int], ...]  # narration and reasoning (holdback)


def _key(chunks: tuple[Chunk, ...]) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """A chunking as the parser receives it: delta texts and, in token tiers, their ids."""
    return tuple((c.text, c.token_ids) for c in chunks)


@dataclass
class Subject:
    """A parser under test facing one sample; every parser call is announced to `progress` and its CPU
    time added to `cpu_s` (per call kind: `parse` for one-shot, `stream` for open/feed/finish).

    The same parser, request and chunking give the same output, so each distinct chunking is streamed and
    judged once per subject (`streamed`), however many modes or generated examples try it, and the
    one-shot result once (`batch`); a cell that reuses a run still counts the CPU time that run took.
    `spent_s` is what the parser actually spent.
    """

    parser: ParserUnderTest
    family: Family
    sample: Sample
    stream: TokenStream
    progress: Progress = field(default_factory=Progress)
    cpu_s: dict[str, float] = field(default_factory=lambda: {"parse": 0.0, "stream": 0.0})
    spent_s: float = 0.0
    _batch: tuple[Message | BaseException, float] | None = field(default=None, repr=False)
    _runs: dict[tuple[tuple[str, tuple[int, ...] | None], ...], Streamed] = field(default_factory=dict, repr=False)

    @property
    def keep_ids(self) -> bool:
        return self.sample.case.native_ids

    @functools.cached_property
    def anatomy(self) -> Anatomy:
        """What the checks need of the sample, computed once per subject."""
        sample = self.sample
        return Anatomy(checks.conserved_pieces(sample), checks.payload_spans(sample), checks.visible_spans(sample))

    def parse(self) -> Message:
        """A fresh one-shot parse (`batch` keeps the first)."""
        self.progress.enter(Call.PARSE)
        started = time.process_time()
        try:
            return self.parser.parse(self.sample.text, self.stream.ids, self.sample.context, self.sample.stop)
        finally:
            spent = time.process_time() - started
            self.spent_s += spent
            self.cpu_s["parse"] += spent
            self.progress.leave()

    def batch(self) -> Message | BaseException:
        """The one-shot result, computed once per subject; the caller's cell counts its CPU time."""
        if self._batch is None:
            before = self.cpu_s["parse"]
            try:
                result: Message | BaseException = self.parse()
            except Exception as exc:  # noqa: BLE001 - recorded, never raised
                result = exc
            self._batch = (result, self.cpu_s["parse"] - before)
            self.cpu_s["parse"] = before
        return self._batch[0]

    def batch_cpu_s(self) -> float:
        self.batch()
        assert self._batch is not None
        return self._batch[1]

    def run(self, chunks: tuple[Chunk, ...]) -> StreamRun:
        """Stream one chunking through a fresh session of the parser."""
        progress, clock = self.progress, time.process_time
        progress.chunking(tuple(c.text for c in chunks))
        spent = 0.0
        progress.enter(Call.OPEN)
        started = clock()
        try:
            session = self.parser.open_stream(self.sample.context)
        finally:
            spent += clock() - started
            progress.leave()
        per_chunk = []
        try:
            for index, chunk in enumerate(chunks):
                progress.enter(Call.FEED, index)
                started = clock()
                try:
                    per_chunk.append(tuple(session.feed(chunk)))
                finally:
                    spent += clock() - started
                    progress.leave()
            progress.enter(Call.FINISH)
            started = clock()
            try:
                final = tuple(session.finish(self.sample.stop))
            finally:
                spent += clock() - started
                progress.leave()
        finally:
            self.spent_s += spent
            self.cpu_s["stream"] += spent
        return StreamRun(chunks, tuple(per_chunk), final)

    def streamed(self, chunks: tuple[Chunk, ...]) -> Streamed:
        """The chunking streamed and judged: once per distinct chunking (the cell counts its CPU either way)."""
        key = _key(chunks)
        known = self._runs.get(key)
        if known is not None:
            self.cpu_s["stream"] += known.cpu_s
            return known
        texts = tuple(c.text for c in chunks)
        before = self.cpu_s["stream"]
        try:
            run = self.run(chunks)
            failures, notes, observed, held = judge_stream(self, run)
            figure = checks.withheld(self.sample.text, self.anatomy.payload, self.family.markers, run)
            result = Streamed(texts, tuple(failures), tuple(notes), observed, held, figure,
                              cpu_s=self.cpu_s["stream"] - before)
        except Exception as exc:  # noqa: BLE001 - a crashing parser is an outcome
            result = Streamed(texts, error=exc, cpu_s=self.cpu_s["stream"] - before)
        self._runs[key] = result
        return result


def _error_text(exc: BaseException) -> str:
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6)
    return "".join(frames)[-4000:]


def _judge_message(subject: Subject, observed: Message) -> tuple[list[Failure], list[str], checks.ExpectedMessage]:
    return checks.judge_message(subject.sample.expected, subject.family.markers, subject.anatomy.pieces, observed)


def incremental_bound(subject: Subject) -> int:
    """The incremental check's bound on this subject's sample."""
    return checks.INCREMENTAL_BOUND + subject.family.held_by_rule(subject.sample.case)


@dataclass
class Withheld:
    """Incremental streaming over the chunkings tried: the figure of each, the worst overall."""

    measured: bool = True
    bound: int = checks.INCREMENTAL_BOUND  # with what the case makes every parser hold (Family.held_by_rule)
    by_chunking: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)

    def add(self, streamed: Streamed) -> None:
        if self.measured:
            self.by_chunking[streamed.texts] = streamed.withheld

    def apply(self, graded: Graded, mode: Mode) -> Graded:
        """The graded cell with the worst figure, and the incremental check's failure where the bound was
        passed: judged on the chunking the cell reports when another check failed (so that its repro shows
        the same), else on the worst chunking, which the cell then reports."""
        if not self.by_chunking:
            return graded
        worst = max(self.by_chunking, key=lambda c: self.by_chunking[c][0])
        judged = graded.chunking if graded.status != "pass" and graded.chunking in self.by_chunking else worst
        failed = checks.incremental(mode.name, *self.by_chunking[judged], self.bound) if graded.status != "error" else []
        graded = dataclasses.replace(graded, withheld=self.by_chunking[worst][0])
        if not failed:
            return graded
        return dataclasses.replace(graded, status="fail" if graded.status == "pass" else graded.status,
                                   failures=(*graded.failures, *failed), chunking=judged)


def judge_stream(subject: Subject, run: StreamRun) -> tuple[list[Failure], list[str], Message, int]:
    sample, batch, markers = subject.sample, subject.batch(), subject.family.markers
    failures, notes, observed = checks.judge_stream(
        sample.expected, markers, subject.anatomy.pieces, run, batch if isinstance(batch, Message) else None,
        keep_ids=subject.keep_ids)
    return failures, notes, observed, checks.holdback(sample.text, subject.anatomy.visible, markers, run)


def crashed(exc: BaseException, chunking: tuple[str, ...] | None = None) -> Graded:
    return Graded("error", (Failure("error", f"{type(exc).__name__}: {exc}"),), chunking=chunking,
                  error=_error_text(exc))


def grade_batch(subject: Subject) -> Graded:
    observed = subject.batch()
    subject.cpu_s["parse"] += subject.batch_cpu_s()
    if isinstance(observed, BaseException):  # a crashing parser is an outcome
        return crashed(observed)
    failures, notes, _ = _judge_message(subject, observed)
    return Graded("fail" if failures else "pass", tuple(failures), tuple(notes), observed)


def _graded_run(streamed: Streamed, holdback: int) -> Graded:
    """A failing run as the cell reports it."""
    if streamed.error is not None:
        return crashed(streamed.error, streamed.texts)
    return Graded("fail", streamed.failures, streamed.notes, streamed.observed, streamed.texts, holdback)


def _grade_chunkings(subject: Subject, mode: Mode, chunkings: Iterable[tuple[Chunk, ...]], withheld: Withheld,
                     generated: bool = False) -> Graded:
    """Every chunking in turn until one fails (the first failing one is what the cell reports);
    `generated` cells also say how many were tried."""
    first: Streamed | None = None
    worst_holdback = 0
    tried = 0
    for chunks in chunkings:
        tried += 1
        streamed = subject.streamed(chunks)
        if streamed.error is None:
            withheld.add(streamed)
            worst_holdback = max(worst_holdback, streamed.holdback)
        if streamed.error is not None or streamed.failures:
            graded = _graded_run(streamed, worst_holdback)
            if generated:
                graded = dataclasses.replace(graded, holdback=worst_holdback, examples=tried)
            return withheld.apply(graded, mode)
        first = first or streamed
    notes, observed = (first.notes, first.observed) if first else ((), None)
    return withheld.apply(Graded("pass", (), notes, observed, holdback=worst_holdback,
                                 examples=tried if generated else None), mode)


class _Failed(Exception):
    """Raised inside the hypothesis search so that it shrinks; carries the graded run."""

    def __init__(self, graded: Graded) -> None:
        super().__init__(graded.failures[0].detail if graded.failures else graded.status)
        self.graded = graded


def stable_seed(subject: Subject, mode: Mode) -> int:
    """The generated chunkings of a derandomized profile come from the input, not from this module's
    source (hypothesis's own derandomized seed hashes the test function's code, so any edit here would
    reshuffle every generated cell): the same for every parser of a family, across framework commits."""
    return _draw(subject, mode).seed


def _draw(subject: Subject, mode: Mode) -> Draw:
    return draw_of(subject.family.name, subject.sample.case.id, mode, subject.sample.text, subject.stream,
                   subject.family.markers)


def _chunks(subject: Subject, mode: Mode, cuts: Sequence[int]) -> tuple[Chunk, ...]:
    if mode.tier == "char":
        return char_chunks(subject.sample.text, cuts)
    return token_chunks(subject.stream, cuts)


def _grade_searched(subject: Subject, mode: Mode, settings: Settings, incremental: bool) -> Graded:
    """Hypothesis searches as it goes, and shrinks what fails where the profile shrinks (`thorough`); a
    derandomized profile seeded from the input, as its stored draws are (`contract.streams.drawn`)."""
    draw = _draw(subject, mode)
    examples = 0
    worst_holdback = 0
    last_failure: Graded | None = None
    first_pass: Graded | None = None
    withheld = Withheld(measured=incremental, bound=incremental_bound(subject))

    @Settings(parent=settings, database=None, deadline=None, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(cuts=draw.strategy())
    def search(cuts: list[int]) -> None:
        nonlocal examples, worst_holdback, last_failure, first_pass
        examples += 1
        streamed = subject.streamed(_chunks(subject, mode, cuts))
        if streamed.error is None:
            withheld.add(streamed)
            worst_holdback = max(worst_holdback, streamed.holdback)
            if not streamed.failures:
                first_pass = first_pass or Graded("pass", (), streamed.notes, streamed.observed)
                return
        last_failure = _graded_run(streamed, worst_holdback)
        raise _Failed(last_failure)  # the single raise site: hypothesis treats sites as distinct bugs

    if settings.derandomize:
        search = seed(draw.seed)(search)
    try:
        search()
    except _Failed as failed:
        found = last_failure or failed.graded
        return withheld.apply(Graded(found.status, found.failures, found.notes, found.observed, found.chunking,
                                     worst_holdback, examples, found.error), mode)
    except Exception as exc:  # noqa: BLE001 - e.g. hypothesis reporting a flaky parser
        if last_failure is None:
            return crashed(exc)
        notes = (*last_failure.notes, f"hypothesis could not replay the failure: {type(exc).__name__}")
        return withheld.apply(Graded(last_failure.status, last_failure.failures, notes, last_failure.observed,
                                     last_failure.chunking, worst_holdback, examples, last_failure.error), mode)
    notes, observed = (first_pass.notes, first_pass.observed) if first_pass else ((), None)
    return withheld.apply(Graded("pass", (), notes, observed, holdback=worst_holdback, examples=examples), mode)


def grade(subject: Subject, mode: Mode, settings: Settings, *, incremental: bool = True) -> Graded:
    """`incremental=False`: deltas cannot be attributed to chunks, so the incremental check is not applied."""
    if not mode.streaming:
        return grade_batch(subject)
    if mode.generated and not settings.derandomize:
        return _grade_searched(subject, mode, settings, incremental)
    withheld = Withheld(measured=incremental, bound=incremental_bound(subject))
    if mode.generated:  # the chunkings hypothesis draws from this input (stored: contract.streams.drawn)
        chunkings = (_chunks(subject, mode, cuts) for cuts in drawn(_draw(subject, mode), settings))
        return _grade_chunkings(subject, mode, chunkings, withheld, generated=True)
    chunkings = deterministic_chunkings(mode, subject.stream, subject.family.markers)
    return _grade_chunkings(subject, mode, chunkings, withheld)
