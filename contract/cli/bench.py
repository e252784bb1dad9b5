"""Benchmarks (`nox -s bench`): what grading costs, and the reference parsers' speed, as printed figures.

`python -m contract.cli.bench [--grade ENGINE ...] [--repeat N]` grades each engine (the reference by default;
`all` for every built engine) N times with `-n 2`, as `nox -s grade` does, each run into a folder of its own,
and prints per engine the minimum and median over the repeats of:

- wall time, and the CPU time of the whole grade (the pytest process and every worker it started, so
  engine servers too), from the operating system's accounting of the finished process tree;
- the parsers' own CPU time (`run.parser_cpu_s` of the results: what the parsers under test spent in
  their calls; a run that several cells share counts once) and the grade's CPU over it: the grader's cost
  per unit of parser work;
- the results file's size.

Then, unless `--no-parsers`: per family, one-shot and one-token-per-delta throughput of the reference parser
on `tool.long_args` (16 KiB of arguments) and peak Python memory while streaming it. Targets are figures
here, never timed tests; run on an idle machine, after `nox -s grade` has built the engines' virtualenvs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from contract.cases.catalog import case
from contract.cases.family import Sample
from contract.grading.adapter import engine_module
from contract.grading.subject import Subject
from contract.streams.chunking import token_chunks
from contract.streams.tokenizer import family_stream
from fixtures import all_families

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class GradeRun:
    """One timed grade of one engine."""

    wall_s: float
    cpu_s: float  # user + system time of the pytest process and every process it started and reaped
    parser_cpu_s: float
    cells: int
    size: int  # bytes of the results file

    @property
    def ratio(self) -> float:
        return self.cpu_s / max(self.parser_cpu_s, 1e-9)


def grade_once(engine: str, python: str, workers: int, out: Path) -> GradeRun:
    """`pytest --grade` of one engine into `out`, timed from outside."""
    results = out / "results.json"
    command = [python, "-m", "pytest", "--grade", "tests/test_matrix.py", "-q", "--assert=plain", "--engine", engine,
               "-n", str(workers), "--results", str(results), "--no-html", "-p", "no:cacheprovider"]  # as nox grades
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not results.exists():
        raise SystemExit(f"bench: grading {engine} wrote no results (exit {done.returncode}):\n"
                         f"{(done.stdout + done.stderr)[-3000:]}")
    document = json.loads(results.read_text(encoding="utf-8"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return GradeRun(wall, cpu, document["run"].parser_cpu_s or 0.0, len(document["cells"]),
                    results.stat().st_size)


def _min_median(values: list[float], fmt: str) -> str:
    return f"{min(values):{fmt}} / {statistics.median(values):{fmt}}"


def grade_table(engines: dict[str, str], repeat: int, workers: int) -> str:
    """Each engine graded `repeat` times: min / median of every figure."""
    rows = []
    totals = []
    for engine, python in engines.items():
        runs = []
        for n in range(repeat):
            with tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as folder:
                runs.append(grade_once(engine, python, workers, Path(folder)))
            print(f"  {engine} #{n + 1}: {runs[-1].wall_s:.1f} s wall, {runs[-1].cpu_s:.1f} s CPU", file=sys.stderr)
        totals.append(min(r.wall_s for r in runs))
        rows.append([engine, runs[0].cells, _min_median([r.wall_s for r in runs], ".1f"),
                     _min_median([r.cpu_s for r in runs], ".1f"), _min_median([r.parser_cpu_s for r in runs], ".1f"),
                     _min_median([r.ratio for r in runs], ".2f"), f"{runs[0].size / 1e6:.2f}"])
    table = tabulate(rows, headers=["engine", "cells", "wall s (min / median)", "CPU s", "parsers' CPU s",
                                    "CPU / parsers' CPU", "results MB"])
    return table + (f"\nevery engine in turn: {sum(totals):.0f} s of grading (the sum of minimum walls)"
                    if len(engines) > 1 else "")


def _best_of(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def parser_table() -> str:
    """The reference parsers on a 16 KiB argument: one shot, one token per delta, peak memory."""
    engine = engine_module("reference").load()
    assert not isinstance(engine, str), engine
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
        size = len(sample.text)
        rows.append([family.name, size, len(chunks), f"{size / batch / 1e6:.2f}", f"{size / streamed / 1e6:.2f}",
                     f"{peak / 1024:.0f}"])
    return tabulate(rows, headers=["family", "chars", "deltas", "batch MB/s", "tokens MB/s", "stream peak KiB"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.cli.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--grade", nargs="*", default=["reference"], metavar="ENGINE",
                        help="engines to grade (`all`: every one given a --python, and the reference)")
    parser.add_argument("--python", action="append", default=[], metavar="ENGINE=PATH",
                        help="the interpreter of an engine's virtualenv (nox -s bench passes every built one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="-n of each grade")
    parser.add_argument("--no-parsers", action="store_true", help="leave out the reference parsers' table")
    args = parser.parse_args(argv)
    pythons = {"reference": sys.executable} | dict(p.split("=", 1) for p in args.python)
    wanted = list(pythons) if "all" in args.grade else args.grade
    missing = [e for e in wanted if e not in pythons]
    if missing:
        parser.error(f"no virtualenv for {', '.join(missing)}: grade it once first (nox -s \"grade(engine='…')\")")
    print(f"grading {', '.join(wanted)} with -n {args.workers}, {args.repeat} times each "
          f"({os.cpu_count()} CPUs here)", file=sys.stderr)
    print(grade_table({e: pythons[e] for e in wanted}, args.repeat, args.workers))
    if not args.no_parsers:
        print()
        print(parser_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
