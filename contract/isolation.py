"""Parsers run in a worker process the grader can kill.

`IsolatedGrader.grade(cell)` sends the cell to a worker (`python -m contract.isolation`), which grades
it with an in-process `Grader` and answers with the record. The controlling side watches the worker:

- **hung**: one parser call (or the engine import) made no progress for `hang_after` seconds of the
  worker's CPU time, or for `WALL_FACTOR` times that in wall time (a call blocked without using CPU).
  CPU time does not stretch when the machine is busy, so a slow parser is never mistaken for a hung
  one; the cell is `timeout`. The framework's own work between parser calls (rendering, building a
  tokenizer) is held to `FRAMEWORK_HANG` instead.
- **crashed**: the worker died (a segfault, `abort()`, an interpreter error); the cell is `error`
  with the signal and the tail of the worker's stderr (faulthandler prints the Python stack there).
- **exploded**: its resident memory grew more than `memory_limit_mb` during the cell; it is killed
  and the cell is `error`.

Each of these says what the parser was doing (the call, the delta being fed) and the next cell gets a
fresh worker. The worker protocol is one JSON line per message on a pipe: the controller writes a
cell, the worker answers with the record's skeleton once the input is known, then the full record.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from . import expectations, progress
from .matrix import Cell, Grader, _base_record
from .progress import Call, Snapshot

ROOT = Path(__file__).resolve().parents[1]
WALL_FACTOR = 4  # a blocked call (no CPU used) is hung after this many times `hang_after` in wall time
FRAMEWORK_HANG = 600.0  # CPU seconds of our own work between parser calls before the worker counts as stuck
POLL_S = 0.05
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Limits:
    hang_after: float = 120.0  # CPU seconds one parser call may run without returning
    memory_limit_mb: int = 4096  # growth of the worker's resident memory during one cell


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime


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

    def check(self, call: Call, seq: int, cpu: float, rss_mb: float, now: float) -> tuple[str, str] | None:
        """(status, cause) when the worker must be stopped, else None."""
        if call in (Call.LOAD, Call.BUILD):  # importing an engine is not the parser's growth
            self.baseline_mb = rss_mb
        bound = FRAMEWORK_HANG if call is Call.IDLE else self.limits.hang_after
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

    def __init__(self, directory: Path, profile: str, n: int) -> None:
        self.progress = progress.create(directory / f"progress-{n}")
        self.log_path = directory / f"stderr-{n}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-m", "contract.isolation", str(self.progress), profile],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=ROOT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout = self.process.stdout.fileno()
        self._pending = b""

    def messages(self, timeout: float) -> list[dict[str, Any]] | None:
        """Whole messages that arrived within `timeout` ([] if none); None once the worker closed its end."""
        ready, _, _ = select.select([self.stdout], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.stdout, 1 << 20)
        if not data:
            return None
        *lines, self._pending = (self._pending + data).split(b"\n")
        return [json.loads(line) for line in lines]

    def stderr_tail(self, limit: int = 3000) -> str:
        data = self.log_path.read_bytes()[-limit:]
        return data.decode("utf-8", "replace").strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._log.close()


@dataclass
class IsolatedGrader:
    """Grades cells in worker processes; never raises for what a parser does."""

    hypothesis_profile: str = "ci"
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="matrix-worker-"))
        self._worker: _Worker | None = None
        self._started = 0

    def _fresh(self) -> _Worker:
        if self._worker is None:
            self._started += 1
            self._worker = _Worker(self._directory, self.hypothesis_profile, self._started)
        return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        for path in self._directory.iterdir():
            path.unlink()
        self._directory.rmdir()

    def grade(self, cell: Cell) -> dict[str, Any]:
        worker = self._fresh()
        started = time.perf_counter()
        skeleton = _base_record(cell)
        try:
            worker.stdin.write((json.dumps(asdict(cell)) + "\n").encode())
            worker.stdin.flush()
        except BrokenPipeError:
            return self._stopped(worker, skeleton, started, "error", "the worker exited before the cell was sent")
        pid = worker.process.pid
        watchdog = Watchdog(self.limits, _rss_mb(pid))
        while True:
            messages = worker.messages(POLL_S)
            if messages is None:  # the worker closed its end: it is exiting, and says how below
                worker.process.wait()
            for message in messages or ():
                if message["final"]:
                    return message["record"]
                skeleton = message["record"]
            if worker.process.poll() is not None:
                code = worker.process.returncode
                cause = (f"the worker died of {signal.Signals(-code).name}" if code < 0
                         else f"the worker exited with status {code}")
                return self._stopped(worker, skeleton, started, "error", cause)
            try:
                snapshot = Snapshot.read(worker.progress, chunk=False)
                cpu, rss = _cpu_seconds(pid), _rss_mb(pid)
            except (OSError, IndexError, ValueError):  # exiting while we looked: the next poll says how
                continue
            stop = watchdog.check(snapshot.call, snapshot.seq, cpu, rss, time.monotonic())
            if stop is not None:
                return self._stopped(worker, skeleton, started, *stop)

    def _stopped(self, worker: _Worker, record: dict[str, Any], started: float, status: str,
                 cause: str) -> dict[str, Any]:
        """The record of a cell whose worker had to be stopped, or died; the next cell gets a new worker."""
        try:
            doing = Snapshot.read(worker.progress).describe()
        except (OSError, ValueError):
            doing = "unknown"
        worker.stop()
        self._worker = None
        detail = f"{cause}, in {doing}"
        stderr = worker.stderr_tail()
        record.update(outcome=status, failures=[{"check": status, "detail": detail}],
                      error=detail + (f"\n\nworker stderr (tail):\n{stderr}" if stderr else ""),
                      signature=expectations.signature(status, [status], None),
                      duration_s=round(time.perf_counter() - started, 4))
        return record


def _serve(progress_path: Path, profile: str) -> None:
    """The worker: grade each cell read from stdin, answer on the original stdout; anything the engine
    prints goes to stderr, so it cannot corrupt the protocol."""
    answers = os.fdopen(os.dup(1), "w", encoding="ascii")
    os.dup2(2, 1)
    grader = Grader(profile, progress.SharedProgress(progress_path))

    def send(record: dict[str, Any], final: bool) -> None:
        # ASCII on the pipe: any text a parser produced (even a lone surrogate) survives the trip
        answers.write(json.dumps({"final": final, "record": record}) + "\n")
        answers.flush()

    for line in sys.stdin:
        cell = Cell(**json.loads(line))
        record = grader.grade(cell, announce=lambda skeleton: send(skeleton, False))
        send(record, True)


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), sys.argv[2])
