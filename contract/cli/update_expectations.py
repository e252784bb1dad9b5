"""Refresh the KnownBroken files from runs, in place (`nox -s update_expectations`), or mirror synthetic-only bugs.

    python -m contract.cli.update_expectations RESULTS... [--dir DIR]
    python -m contract.cli.update_expectations --mirror ENGINE...
"""

from __future__ import annotations

import argparse
from pathlib import Path

from contract.expectations import ExpectationError
from contract.expectations.edit import mirror, update
from contract.grading.adapter import engine_module
from fixtures import all_families, expectations_dir
from reports.load import load_results


def main(argv: list[str] | None = None) -> int:
    """`RESULTS... [--dir DIR]`: refresh every engine's files from runs. `--mirror ENGINE...`: copy each engine's
    entries for families without a real vocabulary from the real tier's file to the synthetic tier's (both tiers
    tokenize those families alike)."""
    parser = argparse.ArgumentParser(prog="python -m contract.cli.update_expectations", description=main.__doc__)
    parser.add_argument("results", type=Path, nargs="*")
    parser.add_argument("--dir", type=Path, help="default: the folder of the vocabulary tier the run graded in")
    parser.add_argument("--mirror", nargs="+", metavar="ENGINE", default=[])
    args = parser.parse_args(argv)
    for engine in args.mirror:
        synthetic_only = {name for name, f in all_families().items() if not f.tiered}
        parsers = {f"{engine}/{p}" for p, family in engine_module(engine).mapping.items() if family in synthetic_only}
        target = expectations_dir("synthetic") / f"{engine}.toml"
        held = mirror(expectations_dir("real") / f"{engine}.toml", target, engine, parsers)
        print(f"{target}: {held} entries of {len(parsers)} synthetic-only parsers mirrored from the real tier")
    for results in args.results:
        try:
            document = load_results(results)
            cells = document["cells"]
        except ValueError as exc:
            print(f"cannot read cells: {exc}")
            return 2
        folder = args.dir or expectations_dir(document["run"].vocabulary)
        for engine in sorted({c.engine for c in cells}):
            path = folder / f"{engine}.toml"
            try:
                added, refreshed, removed = update(path, engine, cells)
            except ExpectationError as exc:
                print(exc)
                return 2
            print(f"{path}: {added} cells added (untriaged), {refreshed} signatures refreshed, {removed} cells removed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
