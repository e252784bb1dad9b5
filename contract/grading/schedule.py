"""Which planned group a free worker grades next.

The plan lists a parser's groups together, so the groups are cut into one contiguous run per worker: a
worker takes the front of its own run and so meets a share of the parsers instead of all of them, and
builds each one's engine state (a tokenizer, an engine's served model) in one process rather than in every
one. A worker whose run is done takes the back of the longest run left (the part its owner reaches last),
so no worker idles while groups wait. A group the grade waits for moves to the front of its run; one that
was never planned goes to the next free worker.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Schedule:
    """The planned groups (by index) no worker has taken yet."""

    runs: list[deque[int]] = field(default_factory=list)
    unplanned: deque[int] = field(default_factory=deque)

    @classmethod
    def split(cls, count: int, workers: int) -> Schedule:
        """Groups `0..count-1` as `workers` contiguous runs of (nearly) equal length."""
        workers = max(1, workers)
        bounds = [count * w // workers for w in range(workers + 1)]
        return cls([deque(range(bounds[w], bounds[w + 1])) for w in range(workers)])

    def take(self, worker: int) -> int | None:
        """The group worker `worker` grades next, or None when none is left."""
        if self.unplanned:
            return self.unplanned.popleft()
        own = self.runs[worker % len(self.runs)] if self.runs else deque()
        if own:
            return own.popleft()
        longest = max(self.runs, key=len, default=deque())
        return longest.pop() if longest else None

    def hurry(self, index: int) -> None:
        """The grade waits for group `index`: its run's worker takes it next (any worker, if it is unplanned)."""
        for run in self.runs:
            if index in run:
                run.remove(index)
                run.appendleft(index)
                return
        if index in self.unplanned:
            self.unplanned.remove(index)
        self.unplanned.appendleft(index)
