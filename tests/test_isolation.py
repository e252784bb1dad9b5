"""The watchdog's rules, fed readings directly: hung is judged in CPU time (a call that waits for the CPU
on a busy machine is not hung), a blocked call in wall time, memory above the cell's baseline."""

from __future__ import annotations

from contract.grading.isolation import FRAMEWORK_HANG, WALL_FACTOR, Limits, Watchdog
from contract.grading.progress import Call

LIMITS = Limits(hang_after=10, memory_limit_mb=100)


def test_a_call_starved_of_cpu_is_not_hung() -> None:
    """Forty wall seconds in one call, but only 5 of them on the CPU (the machine was busy): no verdict."""
    dog = Watchdog(LIMITS, baseline_mb=500)
    assert dog.check(Call.FEED, seq=1, cpu=0.0, rss_mb=500, now=0.0) is None
    assert dog.check(Call.FEED, seq=1, cpu=5.0, rss_mb=500, now=10 * WALL_FACTOR - 1) is None


def test_a_call_that_burns_cpu_without_returning_is_hung() -> None:
    dog = Watchdog(LIMITS, baseline_mb=500)
    dog.check(Call.FEED, seq=7, cpu=1.0, rss_mb=500, now=0.0)
    assert dog.check(Call.FEED, seq=7, cpu=10.5, rss_mb=500, now=11.0) is None
    status, cause = dog.check(Call.FEED, seq=7, cpu=11.5, rss_mb=500, now=12.0)
    assert status == "timeout" and cause == "hung: no progress after 10 s of CPU time"


def test_progress_resets_the_clock() -> None:
    """Quick calls are each judged on their own: 100 calls of 9 s (each under hang_after) are no hang."""
    dog = Watchdog(Limits(hang_after=10, memory_limit_mb=100, cell_cpu=1000), baseline_mb=500)
    for n in range(100):
        assert dog.check(Call.FEED, seq=n, cpu=n * 9.0, rss_mb=500, now=n * 9.0) is None


def test_quick_calls_that_add_up_past_the_cell_bound_are_too_slow() -> None:
    """A stream that re-reads its whole output at every delta: no call hangs, the cell as a whole is stopped.
    Loading the engine, building the parser and the framework's own work do not count against it."""
    dog = Watchdog(Limits(hang_after=10, memory_limit_mb=100, cell_cpu=30), baseline_mb=500)
    assert dog.check(Call.LOAD, seq=0, cpu=0.0, rss_mb=500, now=0.0) is None
    assert dog.check(Call.BUILD, seq=1, cpu=20.0, rss_mb=500, now=20.0) is None
    assert dog.check(Call.IDLE, seq=2, cpu=25.0, rss_mb=500, now=25.0) is None
    for n in range(3, 8):  # five calls of 5 s each: 25 s inside the parser
        assert dog.check(Call.FEED, seq=n, cpu=25.0 + (n - 2) * 5.0, rss_mb=500, now=n) is None
    status, cause = dog.check(Call.FEED, seq=8, cpu=56.0, rss_mb=500, now=9.0)
    assert status == "timeout" and cause == "too slow: 31 s of CPU in the parser's calls on this cell (limit 30 s)"


def test_a_call_blocked_without_cpu_is_hung_after_the_wall_bound() -> None:
    dog = Watchdog(LIMITS, baseline_mb=500)
    dog.check(Call.PARSE, seq=3, cpu=2.0, rss_mb=500, now=100.0)
    assert dog.check(Call.PARSE, seq=3, cpu=2.0, rss_mb=500, now=100.0 + 10 * WALL_FACTOR - 1) is None
    status, cause = dog.check(Call.PARSE, seq=3, cpu=2.0, rss_mb=500, now=100.0 + 10 * WALL_FACTOR + 1)
    assert status == "timeout" and cause.startswith("hung: blocked for 41 s")


def test_the_frameworks_own_work_has_its_own_bound() -> None:
    dog = Watchdog(LIMITS, baseline_mb=500)
    dog.check(Call.IDLE, seq=4, cpu=0.0, rss_mb=500, now=0.0)
    assert dog.check(Call.IDLE, seq=4, cpu=FRAMEWORK_HANG - 1, rss_mb=500, now=FRAMEWORK_HANG) is None
    assert dog.check(Call.IDLE, seq=4, cpu=FRAMEWORK_HANG + 1, rss_mb=500, now=FRAMEWORK_HANG + 2) is not None


def test_memory_counts_from_after_the_engine_loaded() -> None:
    """Importing an engine grows the worker by a gigabyte; only growth after that counts against a parser."""
    dog = Watchdog(LIMITS, baseline_mb=100)
    assert dog.check(Call.LOAD, seq=1, cpu=1.0, rss_mb=1500, now=1.0) is None
    assert dog.check(Call.FEED, seq=2, cpu=1.1, rss_mb=1590, now=1.1) is None
    status, cause = dog.check(Call.FEED, seq=2, cpu=1.2, rss_mb=1610, now=1.2)
    assert status == "error" and cause == "memory: the worker grew by 110 MiB (limit 100 MiB)"


_FRESH_WORKER = """
import json, sys
from contract.grading.grader import Grader
from contract.run.plan import plan
from contract.grading.progress import Call, Progress
from fixtures import all_families

class Imports(Progress):
    calls: list = []
    def enter(self, call, index=-1):
        self.call, self.before = call, set(sys.modules)
    def leave(self):
        self.calls.append((self.call.name, sorted(set(sys.modules) - self.before)))

grader = Grader(progress=Imports(), families=all_families())
for cell in plan(["reference", "tests.miniatures"], ["kimi_k2"], ["batch", "tokens", "chars"], ["tool.single"],
                 registry=all_families()):
    if cell.parser_name in ("kimi_k2", "hangs"):
        grader.grade(cell)
print(json.dumps(Imports.calls))
"""


def test_a_parser_call_pays_for_no_framework_import() -> None:
    """Modules the grader itself needs are imported before it calls a parser, so the first call of a fresh
    worker is charged (and held to the hang bound) for the parser's own work alone: a lazy import of the
    OpenAI SDK inside assembly once cost a miniature's first one-shot parse a third of a second of CPU,
    over a 0.5 s bound on a busy machine. Loading an engine and building a parser may import; the calls
    that parse import only what belongs to the engine under test."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", _FRESH_WORKER], cwd=root, capture_output=True, text=True,
                          timeout=300, check=True)
    calls = json.loads(done.stdout.splitlines()[-1])
    assert {name for name, _ in calls} >= {"LOAD", "BUILD", "PARSE", "OPEN", "FEED", "FINISH"}
    own = ("parsers.reference", "tests.miniatures")
    imported = {module for name, modules in calls if name not in ("LOAD", "BUILD") for module in modules
                if not module.startswith(own)}
    assert imported == set()


def test_the_blocked_clock_stands_still_while_a_worker_waits_for_a_processor() -> None:
    """Two spinners held to one processor each wait on its run queue about half the time: that wait is what
    the watchdog takes off the wall clock, so a call starved on a busy machine is not judged blocked."""
    import os
    import subprocess
    import sys
    import time

    from contract.grading.isolation import _queued_seconds

    cpu = min(os.sched_getaffinity(0))
    spin = "import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass\nprint('done')"
    spinners = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE) for _ in range(2)]
    for process in spinners:
        os.sched_setaffinity(process.pid, {cpu})
    time.sleep(1.0)
    queued = [_queued_seconds(process.pid) for process in spinners]
    for process in spinners:
        process.communicate()
    assert all(q > 0.1 for q in queued), queued
    assert _queued_seconds(os.getpid()) >= 0.0
