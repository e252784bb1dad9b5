"""A cell's outcome: the one vocabulary that grading, judging, results, reports and the gate share.

Grading a cell yields one of `GRADED`; judging it against the KnownBroken files (`contract.expectations`)
turns a graded status into the verdict (`xfail`, `fixed`, `changed`); cells that are never graded are settled
as `n/a`, `unimplemented` or `skip`. Standard library only: the reports read results with nothing else.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """Each compares equal to its string, which is how results files spell it."""

    PASS = "pass"
    FAIL = "fail"
    XFAIL = "xfail"  # known broken, failing as recorded
    FIXED = "fixed"  # known broken, passes now
    CHANGED = "changed"  # known broken, failing differently
    NOT_APPLICABLE = "n/a"  # the family's format cannot express the case
    UNIMPLEMENTED = "unimplemented"  # no family position, or no family fixture for the parser
    ERROR = "error"  # the adapter or parser crashed
    TIMEOUT = "timeout"  # a parser call made no progress
    SKIP = "skip"  # the engine is not installed here


OUTCOMES = tuple(Outcome)  # in the order counts are reported
GRADED = frozenset({Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.TIMEOUT})  # what KnownBroken speaks to
RECORDED = frozenset({Outcome.FAIL, Outcome.CHANGED, Outcome.ERROR, Outcome.TIMEOUT})  # update_expectations adds
FAILING = RECORDED | {Outcome.XFAIL}  # the parser misbehaves, known or not
PASSING = frozenset({Outcome.PASS, Outcome.FIXED})
FAILS_RUN = frozenset({Outcome.FAIL, Outcome.FIXED, Outcome.CHANGED, Outcome.UNIMPLEMENTED, Outcome.ERROR,
                       Outcome.TIMEOUT})  # what a run reports as needing attention
# most urgent first: a group of cells shows its worst
SEVERITY = (Outcome.ERROR, Outcome.TIMEOUT, Outcome.UNIMPLEMENTED, Outcome.CHANGED, Outcome.FIXED, Outcome.FAIL,
            Outcome.XFAIL, Outcome.SKIP, Outcome.PASS, Outcome.NOT_APPLICABLE)
