"""A cell of the matrix: (parser under test, case, mode); the cells of one (parser, case) form a group, graded
together (`contract.grading.grader`, in a worker: `contract.grading.isolation`). What a cell records before and
without grading (`identity`, `settled`) is told by its plan and the families; nothing here imports an engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..cases.catalog import case
from ..cases.family import Family, NotApplicable, Unimplemented
from ..streams.chunking import mode
from ..streams.interleave import NOT_INTERLEAVED
from .outcome import Outcome
from .record import CellRecord


@dataclass(frozen=True)
class Cell:
    engine: str  # the engine spec given on the command line (name or module path)
    engine_name: str
    parser_name: str
    family: str | None  # None: the parser maps to no family fixture
    case: str
    mode: str
    vocabulary: str | None = None  # what the cell is graded on (`vocabulary_label`); None without a family
    calls_parsed: bool = True  # False: the parser under test is a reasoning parser with no tool parser beside it

    @property
    def parser(self) -> str:
        return f"{self.engine_name}/{self.parser_name}"

    @property
    def id(self) -> str:
        return f"{self.parser}:{self.case}:{self.mode}"


@dataclass(frozen=True)
class CellGroup:
    """The cells of one (parser, case), graded together in one worker: the sample is rendered, and a
    chunking that several modes (or generated examples) share is streamed, once."""

    cells: tuple[Cell, ...]

    @property
    def id(self) -> str:
        first = self.cells[0]
        return f"{first.parser}:{first.case}"


# cases the Responses API's modes leave out, and why
NOT_ON_RESPONSES = {
    "tool.long_args": "the Responses API's modes grade how a server writes output items and events, not parsing "
                      "speed: tool.long_args is tool.single's shape at 16 KiB, and parsing it again would double the "
                      "most expensive cells of the quadratic parsers",
}
SLOWDOWN_MODES = ("batch", "tokens")  # where a parser's CPU time is set against the reference parser's


REASONING_IN_CONTENT = "reasoning-in-content"  # the sample as graded for append-think parsers


def sample_key(family: str, case_id: str, variant: str = "") -> str:
    """How cells name their sample in the results' samples table: `family:case[:variant]`."""
    return f"{family}:{case_id}" + (f":{variant}" if variant else "")


def settled(cell: Cell, registry: Mapping[str, Family]) -> dict[str, Any] | None:
    """What a cell records when its outcome needs no engine (n/a, unimplemented), else None."""
    if cell.family is None:
        return {"outcome": "unimplemented", "reason": f"{cell.parser} maps to no family fixture"}
    family = registry.get(cell.family)
    if family is None:
        return {"outcome": "unimplemented",
                "reason": f"{cell.parser} maps to family {cell.family!r}, which has no fixture"}
    position = family.position(case(cell.case))
    if isinstance(position, NotApplicable):
        return {"outcome": "n/a", "reason": position.reason}
    if isinstance(position, Unimplemented):
        return {"outcome": "unimplemented", "reason": position.reason}
    if mode(cell.mode).isolation and cell.case in NOT_INTERLEAVED:
        return {"outcome": "n/a", "reason": NOT_INTERLEAVED[cell.case]}
    if mode(cell.mode).surface == "responses" and cell.case in NOT_ON_RESPONSES:
        return {"outcome": "n/a", "reason": NOT_ON_RESPONSES[cell.case]}
    if not cell.calls_parsed and (case(cell.case).kind == "tool" or _holds_call(family, cell.case)):
        return {"outcome": "n/a", "reason": f"{cell.parser} is a reasoning parser its server runs with no tool "
                                            "parser beside it: tool-call markup is not parsed, so only the "
                                            "reasoning cases whose output holds no call are graded"}
    return None


def _holds_call(family: Family, case_id: str) -> bool:
    """Does the family's sample of the case expect a call (rendered only for parsers without a tool parser)?"""
    sample = family.sample(case(case_id))
    return not isinstance(sample, (NotApplicable, Unimplemented)) and bool(sample.expected.preferred.tool_calls)


def identity(cell: Cell) -> dict[str, Any]:
    """The fields of a cell's record its plan tells: what is graded, before any grading."""
    return {"engine": cell.engine_name, "parser": cell.parser, "family": cell.family, "case": cell.case,
            "kind": case(cell.case).kind, "mode": cell.mode, "tier": mode(cell.mode).tier,
            "vocabulary": cell.vocabulary}


def settled_record(cell: Cell, registry: Mapping[str, Family]) -> CellRecord | None:
    """The record of a cell whose outcome needs no engine (n/a, unimplemented), else None."""
    early = settled(cell, registry)
    if early is None:
        return None
    return CellRecord(**identity(cell), **{**early, "outcome": Outcome(early["outcome"])})
