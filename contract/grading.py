"""Grade one parser on one sample in one mode: run it, apply the checks, keep the evidence.

A parser that raises is `error` and never escapes this module; one that hangs, crashes the
interpreter or exhausts memory is stopped from outside (`contract.isolation`), which reads what it
was doing from the subject's `Progress`. Generated modes run a hypothesis search over chunkings and
keep the failing one (shrunk to a minimal chunking where the profile shrinks, see `contract.profiles`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, seed
from hypothesis import settings as Settings

from . import checks
from .adapter import ParserUnderTest
from .checks import Failure, StreamRun
from .chunking import Mode, char_chunks, char_cuts, deterministic_chunkings, token_chunks, token_cuts
from .family import Family, Sample
from .model import Chunk, Message
from .progress import Call, Progress
from .tokenizer import TokenStream


@dataclass(frozen=True)
class Graded:
    status: str  # pass | fail | error (a hang is stopped from outside: see contract.isolation)
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


@dataclass
class Subject:
    """A parser under test facing one sample; every parser call is announced to `progress` and its CPU
    time added to `cpu_s` (per call kind: `parse` for one-shot, `stream` for open/feed/finish)."""

    parser: ParserUnderTest
    family: Family
    sample: Sample
    stream: TokenStream
    progress: Progress = field(default_factory=Progress)
    cpu_s: dict[str, float] = field(default_factory=lambda: {"parse": 0.0, "stream": 0.0})
    _batch: Message | BaseException | None = field(default=None, repr=False)

    @property
    def keep_ids(self) -> bool:
        return self.sample.case.native_ids

    @contextmanager
    def _calling(self, call: Call, index: int = -1) -> Iterator[None]:
        self.progress.enter(call, index)
        started = time.process_time()
        try:
            yield
        finally:
            self.cpu_s["parse" if call is Call.PARSE else "stream"] += time.process_time() - started
            self.progress.leave()

    def parse(self) -> Message:
        with self._calling(Call.PARSE):
            return self.parser.parse(self.sample.text, self.stream.ids, self.sample.context, self.sample.stop)

    def batch(self) -> Message | BaseException:
        """The one-shot result, computed once, for stream-equals-batch."""
        if self._batch is None:
            try:
                self._batch = self.parse()
            except Exception as exc:  # noqa: BLE001 - recorded, never raised
                self._batch = exc
        return self._batch

    def run(self, chunks: tuple[Chunk, ...]) -> StreamRun:
        self.progress.chunking(tuple(c.text for c in chunks))
        with self._calling(Call.OPEN):
            session = self.parser.open_stream(self.sample.context)
        per_chunk = []
        for index, chunk in enumerate(chunks):
            with self._calling(Call.FEED, index):
                per_chunk.append(tuple(session.feed(chunk)))
        with self._calling(Call.FINISH):
            final = tuple(session.finish(self.sample.stop))
        return StreamRun(chunks, tuple(per_chunk), final)


def _error_text(exc: BaseException) -> str:
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6)
    return "".join(frames)[-4000:]


def _judge_message(subject: Subject, observed: Message) -> tuple[list[Failure], list[str], checks.ExpectedMessage]:
    sample = subject.sample
    return checks.judge_message(sample.expected, subject.family.markers, checks.conserved_pieces(sample), observed)


@dataclass
class Withheld:
    """Incremental streaming over the chunkings tried: the figure of each, the worst overall."""

    measured: bool = True
    by_chunking: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)

    def add(self, subject: Subject, run: StreamRun) -> None:
        if self.measured:
            sample = subject.sample
            figure = checks.withheld(sample.text, checks.payload_spans(sample), subject.family.markers, run)
            self.by_chunking[tuple(c.text for c in run.chunks)] = figure

    def apply(self, graded: Graded, mode: Mode) -> Graded:
        """The graded cell with the worst figure, and the incremental check's failure where the bound was
        passed: judged on the chunking the cell reports when another check failed (so that its repro shows
        the same), else on the worst chunking, which the cell then reports."""
        if not self.by_chunking:
            return graded
        worst = max(self.by_chunking, key=lambda c: self.by_chunking[c][0])
        judged = graded.chunking if graded.status != "pass" and graded.chunking in self.by_chunking else worst
        failed = checks.incremental(mode.name, *self.by_chunking[judged]) if graded.status != "error" else []
        graded = dataclasses.replace(graded, withheld=self.by_chunking[worst][0])
        if not failed:
            return graded
        return dataclasses.replace(graded, status="fail" if graded.status == "pass" else graded.status,
                                   failures=(*graded.failures, *failed), chunking=judged)


def judge_stream(subject: Subject, run: StreamRun) -> tuple[list[Failure], list[str], Message, int]:
    sample, batch = subject.sample, subject.batch()
    failures, notes, observed = checks.judge_stream(
        sample.expected, subject.family.markers, checks.conserved_pieces(sample), run,
        batch if isinstance(batch, Message) else None, keep_ids=subject.keep_ids)
    return failures, notes, observed, checks.holdback(sample, subject.family.markers, run)


def _crash(exc: BaseException, chunking: tuple[str, ...] | None = None) -> Graded:
    return Graded("error", (Failure("error", f"{type(exc).__name__}: {exc}"),), chunking=chunking,
                  error=_error_text(exc))


def grade_batch(subject: Subject) -> Graded:
    try:
        observed = subject.parse()
    except Exception as exc:  # noqa: BLE001 - a crashing parser is an outcome
        return _crash(exc)
    failures, notes, _ = _judge_message(subject, observed)
    return Graded("fail" if failures else "pass", tuple(failures), tuple(notes), observed)


def _grade_chunkings(subject: Subject, chunkings: Iterable[tuple[Chunk, ...]],
                     withheld: Withheld | None = None) -> Graded:
    first: Graded | None = None
    worst_holdback = 0
    for chunks in chunkings:
        texts = tuple(c.text for c in chunks)
        try:
            run = subject.run(chunks)
            failures, notes, observed, held = judge_stream(subject, run)
        except Exception as exc:  # noqa: BLE001
            return _crash(exc, texts)
        if withheld is not None:
            withheld.add(subject, run)
        worst_holdback = max(worst_holdback, held)
        if failures:
            return Graded("fail", tuple(failures), tuple(notes), observed, texts, worst_holdback)
        if first is None:
            first = Graded("pass", (), tuple(notes), observed)
    assert first is not None, "a mode produced no chunking"
    return Graded("pass", (), first.notes, first.observed, holdback=worst_holdback)


class _Failed(Exception):
    """Raised inside the hypothesis search so that it shrinks; carries the graded run."""

    def __init__(self, graded: Graded) -> None:
        super().__init__(graded.failures[0].detail if graded.failures else graded.status)
        self.graded = graded


def stable_seed(subject: Subject, mode: Mode) -> int:
    """The generated chunkings of a derandomized profile come from the input, not from this module's
    source (hypothesis's own derandomized seed hashes the test function's code, so any edit here would
    reshuffle every generated cell): the same for every parser of a family, across framework commits."""
    key = f"{subject.family.name}:{subject.sample.case.id}:{mode.name}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def _grade_generated(subject: Subject, mode: Mode, settings: Settings, incremental: bool) -> Graded:
    if mode.tier == "char":
        strategy = char_cuts(subject.sample.text, subject.family.markers)
        make: Callable[[list[int]], tuple[Chunk, ...]] = lambda cuts: char_chunks(subject.sample.text, cuts)  # noqa: E731
    else:
        strategy = token_cuts(subject.stream, subject.family.markers)
        make = lambda cuts: token_chunks(subject.stream, cuts)  # noqa: E731
    examples = 0
    worst_holdback = 0
    last_failure: Graded | None = None
    first_pass: Graded | None = None
    withheld = Withheld(measured=incremental)

    @Settings(parent=settings, database=None, deadline=None, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(cuts=strategy)
    def search(cuts: list[int]) -> None:
        nonlocal examples, worst_holdback, last_failure, first_pass
        examples += 1
        graded = _grade_chunkings(subject, [make(cuts)], withheld)
        worst_holdback = max(worst_holdback, graded.holdback or 0)
        if graded.status == "pass":
            first_pass = first_pass or graded
            return
        last_failure = graded
        raise _Failed(graded)  # the single raise site: hypothesis treats sites as distinct bugs

    if settings.derandomize:
        search = seed(stable_seed(subject, mode))(search)
    try:
        search()
    except _Failed as failed:
        found = last_failure or failed.graded
        return withheld.apply(Graded(found.status, found.failures, found.notes, found.observed, found.chunking,
                                     worst_holdback, examples, found.error), mode)
    except Exception as exc:  # noqa: BLE001 - e.g. hypothesis reporting a flaky parser
        if last_failure is None:
            return _crash(exc)
        notes = (*last_failure.notes, f"hypothesis could not replay the failure: {type(exc).__name__}")
        return withheld.apply(Graded(last_failure.status, last_failure.failures, notes, last_failure.observed,
                                     last_failure.chunking, worst_holdback, examples, last_failure.error), mode)
    notes, observed = (first_pass.notes, first_pass.observed) if first_pass else ((), None)
    return withheld.apply(Graded("pass", (), notes, observed, holdback=worst_holdback, examples=examples), mode)


def grade(subject: Subject, mode: Mode, settings: Settings, *, incremental: bool = True) -> Graded:
    """`incremental=False`: deltas cannot be attributed to chunks, so the incremental check is not applied."""
    if not mode.streaming:
        return grade_batch(subject)
    if mode.generated:
        return _grade_generated(subject, mode, settings, incremental)
    withheld = Withheld(measured=incremental)
    chunkings = deterministic_chunkings(mode, subject.stream, subject.family.markers)
    return withheld.apply(_grade_chunkings(subject, chunkings, withheld), mode)
