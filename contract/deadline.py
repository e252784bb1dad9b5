"""A wall-clock limit on parser code, so a hanging parser becomes a `timeout` cell, not a stuck run."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ParserTimeout(Exception):
    """The parser under test ran past its deadline."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ParserTimeout inside the block after `seconds` (main thread only; elsewhere unlimited)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise ParserTimeout(f"parser still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
