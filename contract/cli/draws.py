"""Check or rewrite the stored hypothesis draws (`fixtures/drawn_chunkings.jsonl`, see `contract.streams.drawn`)."""

from __future__ import annotations

import argparse
import sys

from contract.cases.family import TIERS
from contract.streams.drawn import STORE, every_draw, stale, write
from contract.streams.profiles import CI, profile
from fixtures import all_families


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.cli.draws", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when the store lacks or holds stale draws")
    action.add_argument("--update", action="store_true", help="draw what is missing and rewrite the store")
    args = parser.parse_args(argv)
    settings = profile(CI)
    draws = every_draw(all_families().values(), TIERS)
    missing, unused = stale(draws, settings)
    if args.check:
        if missing or unused:
            shown = ", ".join(d.key for d in missing[:5]) + (" …" if len(missing) > 5 else "")
            print(f"{STORE}: {len(missing)} draws missing ({shown}), {unused} unused: run "
                  "`python -m contract.cli.draws --update`", file=sys.stderr)
            return 1
        print(f"{STORE}: current ({len(draws)} draws)")
        return 0
    write(draws, settings)
    print(f"{STORE}: {len(draws)} draws ({len(missing)} drawn now, {unused} dropped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
