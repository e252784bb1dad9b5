"""Terminal and markdown summaries of a results file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tabulate import tabulate

from reports.coverage import engine_coverage
from reports.load import OUTCOMES, RUN_FAILING

MAX_FAILING_LINES = 40
DETAIL_CHARS = 100
# Speed is a figure, never a verdict: a parser's slowdown is its CPU time over the reference parser's on the
# same input (batch and one token per delta), read only from cells where the reference needed at least
# MEASURABLE_S: against a few hundred microseconds, a ratio measures timer noise or a parser's one-time
# start-up (loading an encoding on its first parse), not its speed. At SLOW_FACTOR and above it is flagged.
SLOW_FACTOR = 20.0
MEASURABLE_S = 0.002


def count_outcomes(cells: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Cells by outcome, every outcome present, in the schema's order."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for cell in cells:
        counts[cell["outcome"]] += 1
    return counts


def outcome_counts(results: dict[str, Any]) -> dict[str, int]:
    """Cells of the whole run by outcome, zeros included, in the schema's order."""
    return count_outcomes(results["cells"])


def score(counts: dict[str, int]) -> float | None:
    """Percent (one decimal) of graded cells that pass; graded excludes n/a and skip.

    Known-broken cells (xfail) count against: the score measures conformance, not whether the run
    matched its expectations, so engines compare side by side.
    """
    graded = sum(counts.values()) - counts["n/a"] - counts["skip"]
    if not graded:
        return None
    return round(100 * counts["pass"] / graded, 1)


def format_score(value: float | None) -> str:
    """A score as `87.5%`, or `—` when nothing was graded."""
    return "—" if value is None else f"{value:.1f}%"


def all_parsers(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The `parsers` rows, plus any parser that only appears in `cells`."""
    parsers = list(results["parsers"])
    known = {row["parser"] for row in parsers}
    for cell in results["cells"]:
        if cell["parser"] not in known:
            known.add(cell["parser"])
            parsers.append({"engine": cell["engine"], "parser": cell["parser"], "family": cell["family"]})
    return parsers


CHAR_TIER = "char"


def in_char_tier(cell: dict[str, Any]) -> bool:
    """Cells that split inside tokens (re-chunking proxies): reported apart from batch and token tiers."""
    return cell.get("tier") == CHAR_TIER


def parser_scores(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per parser: parser, family, cells by outcome (all tiers), `score` over the batch and token
    tiers and `char_score` over the char tier (percent or None)."""
    cells_by_parser: dict[str, list[dict[str, Any]]] = {}
    for cell in results["cells"]:
        cells_by_parser.setdefault(cell["parser"], []).append(cell)
    rows = []
    for parser in all_parsers(results):
        cells = cells_by_parser.get(parser["parser"], [])
        rows.append(
            {
                "parser": parser["parser"],
                "family": parser["family"],
                **count_outcomes(cells),
                "score": score(count_outcomes(c for c in cells if not in_char_tier(c))),
                "char_score": score(count_outcomes(c for c in cells if in_char_tier(c))),
                "slowest": slowest(cells),
            }
        )
    return rows


def slowest(cells: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The cell with the largest measurable slowdown against the reference parser, or None."""
    measured = [c for c in cells if c.get("slowdown") is not None and (c.get("reference_cpu_s") or 0) >= MEASURABLE_S]
    return max(measured, key=lambda c: c["slowdown"], default=None)


def format_slowdown(cell: dict[str, Any] | None) -> str:
    """`×3.2`, `×140 slow` at or above SLOW_FACTOR, `—` when not measured."""
    if cell is None:
        return "—"
    factor = cell["slowdown"]
    text = f"×{factor:.1f}" if factor < 10 else f"×{factor:.0f}"
    return text + (" slow" if factor >= SLOW_FACTOR else "")


def failing_cells(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells whose outcome fails the run, in file order."""
    return [cell for cell in results["cells"] if cell["outcome"] in RUN_FAILING]


def first_detail(cell: dict[str, Any]) -> str:
    """One line saying why a cell failed, at most DETAIL_CHARS characters."""
    if cell.get("failures"):
        first = cell["failures"][0]
        text = f"{first['check']}: {first['detail']}"
    else:
        text = cell.get("error") or cell.get("reason") or ""
    text = " ".join(str(text).split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def _run_line(run: dict[str, Any]) -> str:
    commit = (run["commit"] or "no commit")[:12]
    return (
        f"run {run['started']} · {run['duration_s']:.1f} s · {commit} · "
        f"hypothesis {run['hypothesis_profile']} · workers {run['workers']}"
    )


def _sections(results: dict[str, Any], fmt: str, cell_text: Any) -> list[tuple[str, str]]:
    """(title, body) pairs shared by the terminal and markdown summaries."""
    counts = outcome_counts(results)
    outcomes_table = tabulate([list(counts.values())], headers=list(counts), tablefmt=fmt)

    rows = parser_scores(results)
    shown = [o for o in OUTCOMES if any(row[o] for row in rows)]
    parser_table = tabulate(
        [
            [
                cell_text(row["parser"]),
                cell_text(row["family"]),
                *(row[o] for o in shown),
                format_score(row["score"]),
                format_score(row["char_score"]),
                format_slowdown(row["slowest"]),
            ]
            for row in rows
        ],
        headers=["parser", "family", *shown, "score", "char tier", "speed"],
        tablefmt=fmt,
        disable_numparse=True,
    )

    failing = failing_cells(results)
    if failing:
        body = tabulate(
            [
                [
                    cell_text(c["parser"]),
                    cell_text(c["case"]),
                    c["mode"],
                    c["outcome"],
                    cell_text(first_detail(c)),
                ]
                for c in failing[:MAX_FAILING_LINES]
            ],
            headers=["parser", "case", "mode", "outcome", "detail"],
            tablefmt=fmt,
            disable_numparse=True,
        )
        if len(failing) > MAX_FAILING_LINES:
            body += f"\n\n… and {len(failing) - MAX_FAILING_LINES} more"
    else:
        body = "No failing cells."
    sections = [
        ("Outcomes", outcomes_table),
        ("Parsers", parser_table),
        (f"Failing cells ({len(failing)})", body),
    ]
    lines = [cell_text(entry.line()) for entry in engine_coverage(results["run"])]
    if lines:
        sections.append(("Coverage of engine registries", "\n".join(f"- {line}" for line in lines)))
    return sections


def terminal_summary(results: dict[str, Any]) -> str:
    """Plain-text summary: outcome counts, per-parser scores, failing cells."""
    parts = [_run_line(results["run"])]
    for title, body in _sections(results, "simple", str):
        parts.append(f"{title}\n{body}")
    return "\n\n".join(parts) + "\n"


def _markdown_text(value: str) -> str:
    """Make untrusted text inert inside a GitHub markdown table cell."""
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("`", "\\`")):
        value = value.replace(raw, escaped)
    return value


def markdown_summary(results: dict[str, Any]) -> str:
    """GitHub-flavoured markdown summary, for a CI step summary or a PR comment."""
    parts = ["## Parser conformance", _markdown_text(_run_line(results["run"]))]
    for title, body in _sections(results, "github", _markdown_text):
        parts.append(f"### {title}\n\n{body}")
    return "\n\n".join(parts) + "\n"
