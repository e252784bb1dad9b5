"""Which planned group a free worker grades next.

The plan lists a parser's groups together, so the groups are cut into one contiguous run per worker: a
worker takes the front of its own run and so meets a share of the parsers instead of all of them, and
builds each one's engine state (a tokenizer, an engine's served model) in one process rather than in every
one. A worker whose run is done takes the back of the longest run left (the part its owner reaches last),
so no worker idles while groups wait. Costly groups (a case that streams a long argument) lead their run:
one met at the end of a run would keep its worker busy while the other has nothing left. A group the grade
waits for moves to the front of its run, behind the costly ones still there; one that was never planned goes
to the next free worker.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

from ..cases.catalog import CASES

COSTLY_ARGUMENTS = 4096  # characters of call arguments from which a case's group is graded first


@dataclass
class Schedule:
    """The planned groups (by index) no worker has taken yet."""

    runs: list[deque[int]] = field(default_factory=list)
    unplanned: deque[int] = field(default_factory=deque)
    costly: frozenset[int] = frozenset()

    @classmethod
    def split(cls, count: int, workers: int, costly: frozenset[int] = frozenset()) -> Schedule:
        """Groups `0..count-1` as `workers` contiguous runs of (nearly) equal length, each with its `costly`
        groups first (in plan order), then the rest (in plan order)."""
        workers = max(1, workers)
        bounds = [count * w // workers for w in range(workers + 1)]
        runs = [deque(sorted(range(bounds[w], bounds[w + 1]), key=lambda i: i not in costly)) for w in range(workers)]
        return cls(runs, costly=costly)

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
        """The grade waits for group `index`: its run's worker takes it next, after the costly groups still
        ahead of it (any worker, if it is unplanned)."""
        for run in self.runs:
            if index in run:
                run.remove(index)
                ahead = 0 if index in self.costly else next(
                    (n for n, i in enumerate(run) if i not in self.costly), len(run))
                run.insert(ahead, index)
                return
        if index in self.unplanned:
            self.unplanned.remove(index)
        self.unplanned.appendleft(index)


def costly_case(case_id: str) -> bool:
    """Whether the case streams a long argument (tool.long_args' 16 KiB): its group costs a parser many times
    what another does, on every chunking."""
    case = CASES.get(case_id)
    if case is None:
        return False
    return any(len(json.dumps(c.arguments)) + len(c.raw_arguments or "") >= COSTLY_ARGUMENTS
               for c in case.scenario.calls)
