"""The watchdog's rules, fed readings directly: hung is judged in CPU time (a call that waits for the CPU
on a busy machine is not hung), a blocked call in wall time, memory above the cell's baseline."""

from __future__ import annotations

from contract.isolation import FRAMEWORK_HANG, WALL_FACTOR, Limits, Watchdog
from contract.progress import Call

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
    """Many quick calls add up to any amount of CPU: each call is judged on its own."""
    dog = Watchdog(LIMITS, baseline_mb=500)
    for n in range(100):
        assert dog.check(Call.FEED, seq=n, cpu=n * 5.0, rss_mb=500, now=n * 5.0) is None


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
