"""Benchmarks (`nox -s bench`): speed and memory of the reference parsers and of grading, as figures.

Prints, per family: one-shot and one-token-per-delta throughput on `tool.long_args` (16 KiB of
arguments), peak Python memory while streaming it, and the time to grade every mode of one case;
then what running parsers in a killable worker costs: the same cells graded in-process and isolated,
and the time to replace a worker. Targets live here, not in timed tests.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

from tabulate import tabulate

from fixtures import all_families

from .catalog import case
from .chunking import MODES, token_chunks
from .family import Sample
from .grading import Subject, grade
from .isolation import IsolatedGrader
from .matrix import Grader, plan
from .profiles import CI, profile
from .tokenizer import family_stream


def _best_of(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    engine = Grader().engine("reference")
    assert not isinstance(engine, str)
    rows = []
    for family in all_families().values():
        sample = family.sample(case("tool.long_args"))
        factory = engine.factories.get(family.name)
        if not isinstance(sample, Sample) or factory is None:
            continue
        parser = factory(family)
        stream = family_stream(family, sample.rendered)
        chunks = token_chunks(stream, range(1, len(stream.ids)))
        subject = Subject(parser, family, sample, stream)

        batch = _best_of(5, subject.parse)
        streamed = _best_of(3, lambda subject=subject, chunks=chunks: subject.run(chunks))
        tracemalloc.start()
        subject.run(chunks)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        graded = _best_of(1, lambda subject=subject: [grade(subject, m, profile(CI)) for m in MODES])
        size = len(sample.text)
        rows.append([family.name, size, len(chunks), f"{size / batch / 1e6:.2f}", f"{size / streamed / 1e6:.2f}",
                     f"{peak / 1024:.0f}", f"{graded:.2f}"])
    print(tabulate(rows, headers=["family", "chars", "deltas", "batch MB/s", "tokens MB/s", "stream peak KiB",
                                  "grade all modes s"]))
    print()
    print(_isolation())


def _isolation() -> str:
    """Per-cell cost of the worker process: batch and tokens cells of every reference family."""
    cells = plan(["reference"], modes=["batch", "tokens"])
    in_process = Grader()
    for cell in cells:  # warm: tokenizers and samples are built once per process either way
        in_process.grade(cell)
    local = _best_of(1, lambda: [in_process.grade(cell) for cell in cells])
    isolated = IsolatedGrader()
    started = time.perf_counter()
    isolated.grade(cells[0])
    first = time.perf_counter() - started
    for cell in cells:
        isolated.grade(cell)
    remote = _best_of(1, lambda: [isolated.grade(cell) for cell in cells])
    isolated.close()
    rows = [["in-process", len(cells), f"{local:.2f}", f"{1000 * local / len(cells):.2f}"],
            ["isolated worker", len(cells), f"{remote:.2f}", f"{1000 * remote / len(cells):.2f}"]]
    return (tabulate(rows, headers=["grading", "cells", "s", "ms per cell"])
            + f"\nstarting a worker and grading its first cell: {first:.2f} s (after a hang, crash or memory stop)")


if __name__ == "__main__":
    main()
