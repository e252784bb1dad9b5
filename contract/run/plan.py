"""The plan of a run: which cells it grades, in a stable order, and how it is split into groups and shards.

The families are the run's to give (`registry`: name -> `Family`; a run passes `fixtures.all_families()`).
Nothing here imports an engine, hypothesis or the checks, so the processes that only plan stay light.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..cases.catalog import CATALOG, case
from ..cases.family import Family
from ..grading.adapter import EngineModule, engine_module
from ..grading.cell import Cell, CellGroup
from ..streams.chunking import MODES, mode
from ..streams.tokenizer import vocabulary_label


def grouped(cells: Iterable[Cell]) -> list[CellGroup]:
    """The cells of each (parser, case) as one group, in plan order."""
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.engine, cell.parser_name, cell.case), []).append(cell)
    return [CellGroup(tuple(group)) for group in groups.values()]


def shard(groups: Sequence[CellGroup], spec: str | None) -> list[CellGroup]:
    """`K/N`: the K-th of N deterministic, balanced parts of a plan (every N-th group from the K-th)."""
    if spec is None:
        return list(groups)
    k, n = parse_shard(spec)
    return [g for i, g in enumerate(groups) if i % n == k - 1]


def parse_shard(spec: str) -> tuple[int, int]:
    """`"2/4"` -> (2, 4); ValueError names what is wrong."""
    try:
        k, n = (int(part) for part in spec.split("/"))
    except ValueError:
        raise ValueError(f"--shard {spec!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise ValueError(f"--shard {spec!r}: K must be between 1 and N")
    return k, n


def plan(
    engines: Sequence[str],
    families: Iterable[str] | None = None,
    modes: Iterable[str] | None = None,
    cases: Iterable[str] | None = None,
    *,
    registry: Mapping[str, Family],
) -> list[Cell]:
    """Every cell of the run, in a stable order (the same in every process, and every shard's plan);
    `families` narrows the run to some of the `registry`'s."""
    wanted_families = set(families) if families else None
    wanted_modes = [mode(m) for m in modes] if modes else list(MODES)
    wanted_cases = [case(c) for c in cases] if cases else list(CATALOG)
    cells: list[Cell] = []
    for spec in engines:
        module = engine_module(spec)
        without_tool_parser = module.without_tool_parser
        served = [m for m in wanted_modes if m.surface in module.surfaces]
        for parser_name, family in module.mapping.items():
            if wanted_families is not None and family not in wanted_families:
                continue
            graded_on = registry.get(family) if family else None
            vocabulary = vocabulary_label(graded_on) if graded_on else None
            for c in wanted_cases:
                for m in served if family else [mode("batch")]:
                    cells.append(Cell(spec, module.name, parser_name, family, c.id, m.name, vocabulary,
                                      calls_parsed=parser_name not in without_tool_parser))
    return cells


def parser_names(module: EngineModule) -> set[str]:
    """Every `engine/name` the engine module grades."""
    return {f"{module.name}/{name}" for name in module.mapping}
