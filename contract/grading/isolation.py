"""Parsers run in a worker process the grader can kill.

`IsolatedGrader.grade(cells)` sends a group of cells to a worker (`python -m contract.grading.isolation`), which
grades them in turn with an in-process `Grader` and answers with each record. The controlling side watches
the worker:

- **too slow**: the parser's calls on one cell took more than `cell_cpu` seconds of CPU together (a stream
  of quick calls that each re-read the whole output); the cell is `timeout`.
- **hung**: one parser call (or the engine import) made no progress for `hang_after` seconds of the
  worker's CPU time, or for `WALL_FACTOR` times that in wall time spent off the run queue (a call blocked
  without using CPU). Neither stretches when the machine is busy: CPU time counts only the worker's own
  work, and the wall clock stops while the worker waits for a processor, so a slow or starved parser is
  never mistaken for a hung one; the cell is `timeout`. The framework's own work between parser calls
  (rendering, building a tokenizer) is held to `FRAMEWORK_HANG` instead.
- **crashed**: the worker died (a segfault, `abort()`, an interpreter error); the cell is `error`
  with the signal and the tail of the worker's stderr (faulthandler prints the Python stack there).
- **exploded**: its resident memory grew more than `memory_limit_mb` during the cell; it is killed
  and the cell is `error`.

Each of these says what the parser was doing (the call, the delta being fed) and the next cell gets a
fresh worker (and the group's remaining cells go to it). The worker protocol is one JSON line per message
on a pipe: the controller writes the cells, the worker answers for each with the record's skeleton once the
input is known, then the full record with the samples table entries it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from ..cases.family import load_families
from . import progress
from .cell import Cell, identity
from .progress import Call, Snapshot
from .record import CellRecord, signature
from .schedule import Schedule

ROOT = Path(__file__).resolve().parents[2]
WALL_FACTOR = 4  # a blocked call (no CPU used) is hung after this many times `hang_after` in wall time
FRAMEWORK_HANG = 600.0  # CPU seconds of our own work between parser calls before the worker counts as stuck
POLL_S = 0.05
GRACE_S = 10.0  # how long a worker may take to end when the run is over (an engine's server stops with it)
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Limits:
    hang_after: float = 120.0  # CPU seconds one parser call may run without returning
    memory_limit_mb: int = 4096  # growth of the worker's resident memory during one cell
    cell_cpu: float = 60.0  # CPU seconds the parser's calls may take together on one cell


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime


def _queued_seconds(pid: int) -> float:
    """How long the worker's main thread has waited on a run queue for a processor (0 where the kernel does
    not say)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _rss_mb(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE / 2**20


@dataclass
class Watchdog:
    """The rules that stop a worker during one cell, fed what the controller reads at every poll."""

    limits: Limits
    baseline_mb: float
    _seq: int = -1
    _since_wall: float = 0.0
    _since_cpu: float = 0.0
    _last_cpu: float | None = None
    _parser_cpu: float = 0.0  # CPU spent inside parser calls on this cell so far

    def check(self, call: Call, seq: int, cpu: float, rss_mb: float, now: float) -> tuple[str, str] | None:
        """(status, cause) when the worker must be stopped, else None; `now` is a clock that stands still
        while the worker waits for a processor."""
        if call in (Call.LOAD, Call.BUILD):  # importing an engine is not the parser's growth
            self.baseline_mb = rss_mb
        bound = FRAMEWORK_HANG if call is Call.IDLE else self.limits.hang_after
        if self._last_cpu is not None and call not in (Call.IDLE, Call.LOAD, Call.BUILD):
            self._parser_cpu += cpu - self._last_cpu
        self._last_cpu = cpu
        if self._parser_cpu > self.limits.cell_cpu:
            return "timeout", (f"too slow: {self._parser_cpu:.0f} s of CPU in the parser's calls on this cell "
                               f"(limit {self.limits.cell_cpu:.0f} s)")
        if seq != self._seq:
            self._seq, self._since_wall, self._since_cpu = seq, now, cpu
        elif cpu - self._since_cpu > bound:
            return "timeout", f"hung: no progress after {cpu - self._since_cpu:.0f} s of CPU time"
        elif now - self._since_wall > bound * WALL_FACTOR:
            return "timeout", f"hung: blocked for {now - self._since_wall:.0f} s without returning"
        if rss_mb - self.baseline_mb > self.limits.memory_limit_mb:
            return "error", (f"memory: the worker grew by {rss_mb - self.baseline_mb:.0f} MiB "
                             f"(limit {self.limits.memory_limit_mb} MiB)")
        return None


class _Worker:
    """One worker process and its files."""

    def __init__(self, directory: Path, profile: str, families: tuple[str, str], n: int, cpu: int | None) -> None:
        self.progress = progress.create(directory / f"progress-{n}")
        self.log_path = directory / f"stderr-{n}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-m", "contract.grading.isolation", str(self.progress), profile, *families],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=ROOT,
        )
        if cpu is not None:
            with contextlib.suppress(ProcessLookupError):  # before it starts a thread or a server: they inherit it
                os.sched_setaffinity(self.process.pid, {cpu})
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout = self.process.stdout.fileno()
        self._pending = b""
        self.received: deque[dict[str, Any]] = deque()
        self.closed = False  # the worker closed its end of the pipe

    def send(self, cells: Sequence[Cell]) -> bool:
        """Hand the worker cells to grade in turn; False if it is gone."""
        try:
            self.stdin.write((json.dumps([asdict(c) for c in cells]) + "\n").encode())
            self.stdin.flush()
        except BrokenPipeError:
            return False
        return True

    def receive(self) -> None:
        """Read what has arrived (call when the pipe is readable) into `received`, whole messages only."""
        data = os.read(self.stdout, 1 << 20)
        self.closed = not data
        *lines, self._pending = (self._pending + data).split(b"\n")
        self.received.extend(json.loads(line) for line in lines)

    def stderr_tail(self, limit: int = 3000) -> str:
        data = self.log_path.read_bytes()[-limit:]
        return data.decode("utf-8", "replace").strip()

    def stop(self, grace_s: float = 0.0) -> None:
        """Kill the worker, or with `grace_s` first let it end on its own (its engine's servers with it)."""
        if grace_s and self.process.poll() is None:
            self.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace_s)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._log.close()


@dataclass(frozen=True)
class Graded:
    """A cell's record as the worker answered (or as the controller wrote it for a stopped worker), and
    the samples table entries it brought (a sample is sent once per worker)."""

    record: CellRecord
    samples: dict[str, dict[str, Any]]


@dataclass
class _Slot:
    """One worker of the pool and the group it is grading: the cells still to be answered, the skeleton
    of the cell being graded, and the watchdog on it."""

    worker: _Worker | None = None
    group: int | None = None
    cells: deque[Cell] = field(default_factory=deque)
    skeleton: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    watchdog: Watchdog | None = None
    checked: float = 0.0  # when the watchdog last looked (monotonic)
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)  # samples the cell's messages brought


@dataclass
class IsolatedGrader:
    """Grades groups of cells in a pool of worker processes; never raises for what a parser does.

    `plan(groups)` tells the pool the groups in the order they will be asked for, and each worker takes its
    next one (`Schedule`) as soon as it is free, so `graded(i)` mostly finds its answers waiting. In a pool
    of several, each worker, with every thread and process it starts (an engine's server), runs on one
    processor of those the grade may use, a different one per worker while they last: a worker and its
    server hand each request back and forth on one core instead of waking each other across cores (a tenth of
    a Dynamo grade). A lone worker is left to the scheduler, so grades run side by side share the machine.
    Every cell is watched on its own: when a worker has to be stopped, its cell is recorded as such and the
    rest of its group goes to a fresh worker.
    """

    hypothesis_profile: str = "ci"
    limits: Limits = Limits()
    size: int = 1  # workers grading at once
    families: str = field(kw_only=True)  # the module whose `all_families()` the plan's families are (`load_families`)
    tier: str = field(kw_only=True)  # the vocabulary tier they are graded in (`Family.in_tier`)
    spent_s: float = 0.0  # CPU time the parsers under test spent in this grader's workers

    def __post_init__(self) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="matrix-worker-"))
        self._slots = [_Slot() for _ in range(max(1, self.size))]
        self._cpus = sorted(os.sched_getaffinity(0)) if len(self._slots) > 1 else []  # one per worker, in turn
        self._started = 0
        self._groups: list[tuple[Cell, ...]] = []
        self._schedule = Schedule()  # planned groups no worker has taken yet
        self._answers: dict[int, list[Graded]] = {}
        self._where: dict[tuple[Cell, ...], deque[int]] = {}  # planned groups not asked for yet

    def plan(self, groups: Sequence[Sequence[Cell]]) -> None:
        """The groups `grade` will be asked for, in that order: workers take them as they come free."""
        self._groups = [tuple(g) for g in groups]
        self._schedule = Schedule.split(len(self._groups), len(self._slots))
        self._where = {}
        for index, group in enumerate(self._groups):
            self._where.setdefault(group, deque()).append(index)

    def grade(self, cells: Sequence[Cell]) -> list[Graded]:
        """Each cell's record of a group, in order, with the samples table entries it brought: planned
        groups are mostly graded already; any other is graded now."""
        wanted = tuple(cells)
        planned = self._where.get(wanted)
        if planned:
            index = planned.popleft()
        else:
            self._groups.append(wanted)
            index = len(self._groups) - 1
        return self._graded(index)

    def _graded(self, index: int) -> list[Graded]:
        """Each cell's record of planned group `index`, in order, with the samples table entries it brought."""
        if index not in self._answers:  # not taken yet (asked out of order, or again): next in line
            self._schedule.hurry(index)
        while index not in self._answers or any(slot.group == index for slot in self._slots):
            self._dispatch()
            self._pump()
        return self._answers.pop(index)

    def close(self) -> None:
        for slot in self._slots:
            if slot.worker is not None:
                slot.worker.stop(grace_s=GRACE_S)
                slot.worker = None
        for path in self._directory.iterdir():
            path.unlink()
        self._directory.rmdir()

    def _dispatch(self) -> None:
        """Give every idle worker the next group."""
        for number, slot in enumerate(self._slots):
            if slot.group is None and (index := self._schedule.take(number)) is not None:
                self._answers[index] = []
                slot.group, slot.cells = index, deque(self._groups[index])
                self._send(slot)

    def _send(self, slot: _Slot) -> None:
        """The slot's remaining cells to its worker (a fresh one if it has none)."""
        while slot.cells:
            if slot.worker is None:
                self._started += 1
                cpu = self._cpus[self._slots.index(slot) % len(self._cpus)] if self._cpus else None
                slot.worker = _Worker(self._directory, self.hypothesis_profile, (self.families, self.tier), self._started,
                                      cpu)
            self._watch(slot)
            if slot.worker.send(slot.cells):
                return
            self._stop(slot, "error", "the worker exited before the cell was sent")

    def _watch(self, slot: _Slot) -> None:
        """Start watching the next cell of the slot."""
        assert slot.worker is not None
        slot.skeleton, slot.started = identity(slot.cells[0]), time.perf_counter()
        slot.watchdog = Watchdog(self.limits, _rss_mb(slot.worker.process.pid))

    def _pump(self) -> None:
        """Wait a little for the busy workers, take what they answered, stop any that must be stopped."""
        busy = [slot for slot in self._slots if slot.group is not None and slot.worker is not None]
        waiting = {slot.worker.stdout: slot.worker for slot in busy  # type: ignore[union-attr]
                   if not slot.worker.closed}  # type: ignore[union-attr]
        answered = any(slot.worker.received for slot in busy)  # type: ignore[union-attr]
        if waiting:
            ready, _, _ = select.select(list(waiting), [], [], 0 if answered else POLL_S)
            for fd in ready:
                waiting[fd].receive()
        now = time.monotonic()
        for slot in busy:
            self._take(slot)
            if slot.group is not None and slot.worker is not None and (
                    slot.worker.closed or now - slot.checked >= POLL_S):
                slot.checked = now
                self._check(slot)

    def _take(self, slot: _Slot) -> None:
        """Handle the messages the slot's worker sent."""
        worker = slot.worker
        assert worker is not None and slot.group is not None
        while worker.received:
            message = worker.received.popleft()
            slot.samples.update(message["samples"])
            if not message["final"]:
                slot.skeleton = message["record"]
                continue
            self.spent_s += message["spent_s"]
            self._answered(slot, Graded(CellRecord.from_own_json(message["record"]), slot.samples))
            if slot.group is None:
                return
            self._watch(slot)

    def _answered(self, slot: _Slot, graded: Graded) -> None:
        assert slot.group is not None
        self._answers[slot.group].append(graded)
        slot.samples = {}
        slot.cells.popleft()
        if not slot.cells:
            slot.group, slot.watchdog = None, None

    def _check(self, slot: _Slot) -> None:
        """Stop the slot's worker if it died, hung or exploded."""
        worker = slot.worker
        assert worker is not None and slot.watchdog is not None
        if worker.closed:  # the worker closed its end: it is exiting, and says how below
            worker.process.wait()
        if worker.process.poll() is not None:
            code = worker.process.returncode
            cause = (f"the worker died of {signal.Signals(-code).name}" if code < 0
                     else f"the worker exited with status {code}")
            self._stop(slot, "error", cause)
            return
        try:
            snapshot = Snapshot.read(worker.progress, chunk=False)
            pid = worker.process.pid
            cpu, rss, now = _cpu_seconds(pid), _rss_mb(pid), time.monotonic() - _queued_seconds(pid)
        except (OSError, IndexError, ValueError):  # exiting while we looked: the next poll says how
            return
        stop = slot.watchdog.check(snapshot.call, snapshot.seq, cpu, rss, now)
        if stop is not None:
            self._stop(slot, *stop)

    def _stop(self, slot: _Slot, status: str, cause: str) -> None:
        """Record the slot's cell as its worker had to be stopped (or died), replace the worker, and send it
        the rest of the group."""
        worker = slot.worker
        assert worker is not None
        try:
            doing = Snapshot.read(worker.progress).describe()
        except (OSError, ValueError):
            doing = "unknown"
        worker.stop()
        slot.worker = None
        detail = f"{cause}, in {doing}"
        stderr = worker.stderr_tail()
        record = CellRecord.from_json({
            **slot.skeleton, "outcome": status, "failures": [{"check": status, "detail": detail}],
            "error": detail + (f"\n\nworker stderr (tail):\n{stderr}" if stderr else ""),
            "signature": signature(status, [status], None),
            "duration_s": round(time.perf_counter() - slot.started, 4)})
        self._answered(slot, Graded(record, slot.samples))
        self._send(slot)


def _serve(progress_path: Path, profile: str, families: str, tier: str) -> None:
    """The worker: grade the cells of each line read from stdin, answer on the original stdout; anything
    the engine prints goes to stderr, so it cannot corrupt the protocol."""
    from .grader import Grader  # the worker side alone imports what grading needs

    answers = os.fdopen(os.dup(1), "w", encoding="ascii")
    os.dup2(2, 1)
    grader = Grader(profile, progress.SharedProgress(progress_path), families=load_families(families, tier))
    sent: set[str] = set()

    def send(record: dict[str, Any], final: bool) -> None:
        # ASCII on the pipe: any text a parser produced (even a lone surrogate) survives the trip
        key = record.get("sample")
        message: dict[str, Any] = {"final": final, "record": record,
                                   "samples": {key: grader.samples[key]} if key is not None and key not in sent else {}}
        sent.update(message["samples"])
        if final:
            message["spent_s"] = grader.spent_s - spent
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    for line in sys.stdin:
        for fields in json.loads(line):
            spent = grader.spent_s
            record = grader.grade(Cell(**fields), announce=lambda skeleton: send(skeleton, False))
            send(record.to_json(), True)


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4])
