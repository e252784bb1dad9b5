"""CLI: `python -m reports RESULTS... [--html PATH] [--markdown PATH] [--quiet]`.

Several results files (e.g. one per engine) are shown side by side in one matrix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.html import write_matrix
from reports.merge import load_merged
from reports.summary import markdown_summary, terminal_summary


def main(argv: list[str] | None = None) -> int:
    """Write the HTML matrix (and optionally markdown) for results files; 2 when a file is bad."""
    parser = argparse.ArgumentParser(prog="python -m reports", description=__doc__)
    parser.add_argument("results", type=Path, nargs="+", help="results files (reports/SCHEMA.md)")
    parser.add_argument("--html", type=Path, help="HTML matrix path (default: matrix.html beside the first RESULTS)")
    parser.add_argument("--markdown", type=Path, help="also write a markdown summary here")
    parser.add_argument("--quiet", action="store_true", help="do not print the terminal summary")
    args = parser.parse_args(argv)
    try:
        results = load_merged(args.results)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    write_matrix(results, args.html or args.results[0].with_name("matrix.html"))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown_summary(results), encoding="utf-8")
    if not args.quiet:
        print(terminal_summary(results), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
