"""A cell's id as a person hands it over: `ENGINE/PARSER:CASE:MODE`, or the node id a cell's rerun command
names (`tests/test_matrix.py::test_cells[ENGINE/PARSER:CASE]`) with that command's `--mode MODE`.

One parser for both, used by `python -m contract.cli.repro` to find the cell and by `nox -s repro` to find
its engine's virtualenv first. Standard library only: nox imports this before any project dependency is installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

EXAMPLE = "sglang/kimi_k2:tool.missing_end:tokens"
FORMS = (f"expected ENGINE/PARSER:CASE:MODE (e.g. {EXAMPLE}) or a rerun's node id "
         "'tests/test_matrix.py::test_cells[ENGINE/PARSER:CASE]' with --mode MODE")
_PART = r"[^\s/:\[\]'\"]+"
_CELL = re.compile(rf"(?P<engine>{_PART})/(?P<parser>{_PART}):(?P<case>{_PART}):(?P<mode>{_PART})")
_NODE = re.compile(rf"(?:\S*::)?test_cells\[(?P<engine>{_PART})/(?P<parser>{_PART}):(?P<case>{_PART})\]")


@dataclass(frozen=True)
class CellId:
    """Names one cell; its parts are spelled as in results files (`Cell.parser_name` is the parser's own name)."""

    engine: str
    parser_name: str
    case: str
    mode: str

    @property
    def parser(self) -> str:
        return f"{self.engine}/{self.parser_name}"

    def __str__(self) -> str:
        return f"{self.parser}:{self.case}:{self.mode}"


def parse_cell_id(text: str, mode: str | None = None) -> CellId:
    """The cell `text` names, in either form (shell quotes around it allowed); `mode` is the `--mode` given with
    it, which a node id needs and a cell id, naming its own, must agree with. ValueError names the text."""
    given = text.strip().strip("'\"")
    if found := _CELL.fullmatch(given):
        cell = CellId(found["engine"], found["parser"], found["case"], found["mode"])
        if mode is not None and mode != cell.mode:
            raise ValueError(f"{text!r} names mode {cell.mode!r}, but --mode says {mode!r}")
        return cell
    if found := _NODE.fullmatch(given):
        if mode is None:
            raise ValueError(f"{text!r}: a node id names a parser and case; add the cell's --mode as its rerun does")
        return CellId(found["engine"], found["parser"], found["case"], mode)
    raise ValueError(f"{text!r} is not a cell: {FORMS}")


def cell_in_args(args: Sequence[str]) -> CellId:
    """The cell a repro command line names, for nox to pick the engine before the command runs: its first
    argument with a `/` and a `:` (an option's value such as `--out DIR` has no `:`), with its `--mode M` or
    `--mode=M`."""
    named = [a for a in args if not a.startswith("-") and "/" in a and ":" in a]
    if not named:
        raise ValueError(f"no cell given: {FORMS}")
    mode = None
    for n, arg in enumerate(args):  # the last one counts, as argparse takes it
        if arg.startswith("--mode="):
            mode = arg.removeprefix("--mode=")
        elif arg == "--mode" and n + 1 < len(args):
            mode = args[n + 1]
    return parse_cell_id(named[0], mode)
