"""Several results files read as one: the shards of one run joined, engines' runs side by side.

`python -m reports.merge SHARD... --out RESULTS` writes the results file of a run graded in shards
(`--shard K/N`, e.g. one CI job each): the same cells, in the same order, as the run graded whole.
`python -m reports.merge FILE... --into FOLDER` takes the results and shard files of several engines (the
artifacts of a CI matrix, say) and writes each engine's whole run to `FOLDER/<engine>/results.json`.
`python -m reports.merge --join-shards-in FOLDER` joins, in each engine's folder under FOLDER, its shard files
into its `results.json` where that is missing or older than a shard (what `nox -s report` does first).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.grading.record import CellRecord
from contract.run.record import EngineRun, RunRecord
from contract.run.results import write as write_results
from reports.load import load_results
from reports.summary import wall_span


def merged_run(runs: list[RunRecord], engines: dict[str, EngineRun]) -> RunRecord:
    """The `run` of a merged document: the first run's settings with the engines of all runs, each run's own
    metadata in `runs`, and wall-clock bounds over all of them.

    `started` is the earliest start, `finished` the latest finish and `duration_s` the span between them
    (not the sum of the runs' durations: runs may overlap or leave gaps); both are None unless every run
    has ISO-8601 `started` and `finished`. `commit` is the runs' common commit, None when they differ.
    """
    span = wall_span(runs)
    commits = {run.commit for run in runs}
    return dataclasses.replace(
        runs[0],
        started=span[0] if span else runs[0].started,
        finished=span[1] if span else None,
        duration_s=span[2] if span else None,
        commit=commits.pop() if len(commits) == 1 else None,
        engines=engines,
        runs=tuple(runs),
    )


def merge_results(documents: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """One document: parsers and cells of every run, the engines of every run, the catalog they share.

    `run` is merged_run's; two runs of the same engine or from different case catalogs cannot be merged.
    """
    names = names or [f"results #{n + 1}" for n in range(len(documents))]
    first = documents[0]
    case_ids = [c["id"] for c in first["cases"]]
    engines: dict[str, EngineRun] = {}
    for name, document in zip(names, documents, strict=True):
        if [c["id"] for c in document["cases"]] != case_ids:
            raise ValueError(f"{name}: its case catalog differs from {names[0]}'s; grade both at the same commit")
        for engine, info in document["run"].engines.items():
            if engine in engines:
                raise ValueError(f"{name}: engine {engine!r} is graded in two of the results files")
            engines[engine] = info
    if len(documents) == 1:
        return first
    return {
        **first,
        "run": merged_run([d["run"] for d in documents], engines),
        "parsers": [p for d in documents for p in d["parsers"]],
        "cells": [c for d in documents for c in d["cells"]],
    }


def join_shards(documents: list[dict[str, Any]], names: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The documents with every run graded in shards (`run.shard` "K/N") replaced by that run whole; a run
    whose shards are not all there is a ValueError naming the missing ones."""
    runs: dict[tuple[tuple[str, ...], int], dict[int, tuple[dict[str, Any], str]]] = {}
    whole: list[tuple[dict[str, Any], str]] = []
    for document, name in zip(documents, names, strict=True):
        shard = document["run"].shard
        if not shard:
            whole.append((document, name))
            continue
        k, n = (int(x) for x in shard.split("/"))
        parts = runs.setdefault((tuple(sorted(document["run"].engines)), n), {})
        if k in parts:
            raise ValueError(f"{name}: shard {shard} is also in {parts[k][1]}")
        parts[k] = (document, name)
    for (engines, n), parts in runs.items():
        missing = sorted(set(range(1, n + 1)) - set(parts))
        if missing:
            raise ValueError(f"{', '.join(name for _, name in parts.values())}: shards "
                             f"{', '.join(f'{k}/{n}' for k in missing)} of {', '.join(engines)} are missing")
        ordered = [parts[k] for k in range(1, n + 1)]
        whole.append((joined([d for d, _ in ordered], [name for _, name in ordered]), " + ".join(nm for _, nm in ordered)))
    return [d for d, _ in whole], [name for _, name in whole]


def joined(shards: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Shards 1..N of one run as the run graded whole: shard K holds every N-th (parser, case) group of the
    plan from the K-th, so taking a group from each shard in turn restores the plan's order."""
    first = shards[0]
    for document, name in zip(shards[1:], names[1:], strict=True):
        for key in ("commit", "hypothesis_profile", "vocabulary"):
            if getattr(document["run"], key) != getattr(first["run"], key):
                raise ValueError(f"{name}: its {key} differs from {names[0]}'s; grade every shard alike")
        if [c["id"] for c in document["cases"]] != [c["id"] for c in first["cases"]]:
            raise ValueError(f"{name}: its case catalog differs from {names[0]}'s; grade every shard alike")
    groups = [_groups(document["cells"]) for document in shards]
    cells = [cell for i in range(max(map(len, groups))) for shard in groups if i < len(shard) for cell in shard[i]]
    parsers = {p["parser"]: p for document in shards for p in document["parsers"]}
    order = list(dict.fromkeys(cell.parser for cell in cells))
    span = wall_span([document["run"] for document in shards])
    run = dataclasses.replace(
        first["run"], shard=None, shards=tuple(document["run"] for document in shards),
        parser_cpu_s=round(sum(document["run"].parser_cpu_s or 0 for document in shards), 3),
        started=span[0] if span else first["run"].started, finished=span[1] if span else None,
        duration_s=span[2] if span else None)
    return {**first, "run": run, "parsers": [parsers[p] for p in order if p in parsers],
            "samples": {k: v for document in shards for k, v in document.get("samples", {}).items()},
            "cells": cells}


def _groups(cells: list[CellRecord]) -> list[list[CellRecord]]:
    """Consecutive cells of one (parser, case)."""
    groups: list[list[CellRecord]] = []
    for cell in cells:
        if groups and (groups[-1][0].parser, groups[-1][0].case) == (cell.parser, cell.case):
            groups[-1].append(cell)
        else:
            groups.append([cell])
    return groups


def load_merged(paths: list[Path]) -> dict[str, Any]:
    """Load and validate each file, join the shards of a run, then merge; ValueError names the file at fault."""
    documents, names = join_shards([load_results(p) for p in paths], [str(p) for p in paths])
    return merge_results(documents, names)


def one_run(paths: list[Path]) -> tuple[dict[str, Any], str]:
    """The one run the files make (a run's shards joined), and its name; ValueError when they make several."""
    documents, names = join_shards([load_results(p) for p in paths], [str(p) for p in paths])
    if len(documents) != 1:
        raise ValueError(f"{', '.join(names)}: {len(documents)} runs, not one")
    return documents[0], names[0]


@dataclass(frozen=True)
class Joined:
    """An engine's results file written from its shards."""

    results: Path
    shards: tuple[Path, ...]
    cells: int


def join_shards_in(folder: Path) -> list[Joined]:
    """Each engine graded in shards (`FOLDER/<engine>/shard-K-of-N.json`, one CI job each) gets its results.json
    joined from them, unless that file is newer than every shard (joined already, or graded whole since).
    ValueError names the shards that do not make one run."""
    written = []
    for engine in sorted(p for p in folder.glob("*") if p.is_dir()):
        shards = sorted(engine.glob("shard-*-of-*.json"))
        results = engine / "results.json"
        if shards and (not results.exists() or results.stat().st_mtime < max(s.stat().st_mtime for s in shards)):
            document, _ = one_run(shards)
            write_results(results, document)
            written.append(Joined(results, tuple(shards), len(document["cells"])))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports.merge", description=__doc__.split("\n\n")[1])
    parser.add_argument("files", type=Path, nargs="*", help="results files, shards of a run among them")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="the results file of the one run the files make")
    where.add_argument("--into", type=Path, help="a folder: each engine's run into <engine>/results.json there")
    where.add_argument("--join-shards-in", type=Path, metavar="FOLDER",
                       help="no files: join each <engine>/shard-K-of-N.json there into its results.json")
    args = parser.parse_args(argv)
    if bool(args.files) == bool(args.join_shards_in):
        parser.error("give results files with --out or --into, or --join-shards-in FOLDER alone")
    try:
        if args.join_shards_in:
            for joined in join_shards_in(args.join_shards_in):
                print(f"{joined.results}: {joined.cells} cells from {' + '.join(map(str, joined.shards))}")
            return 0
        if args.out:
            document, name = one_run(args.files)
            write_results(args.out, document)
            print(f"{args.out}: {len(document['cells'])} cells from {name}")
            return 0
        documents, names = join_shards([load_results(p) for p in args.files], [str(p) for p in args.files])
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    for document, name in zip(documents, names, strict=True):
        engines = list(document["run"].engines)
        if len(engines) != 1:
            print(f"{name}: grades {len(engines)} engines; --into keeps one engine's run per folder", file=sys.stderr)
            return 2
        path = args.into / engines[0] / "results.json"
        write_results(path, document)
        print(f"{path}: {len(document['cells'])} cells from {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
