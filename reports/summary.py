"""Terminal and markdown summaries of a results file: what needs attention first, then per parser."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from tabulate import tabulate

from reports.coverage import KIND_LABELS, KindCoverage, engine_coverage
from reports.load import MODES, OUTCOMES, RUN_FAILING
from reports.text import clip, inert_markdown, inert_terminal

MAX_FAILING_LINES = 40  # attention rows (one per parser, case and outcome) before "… and N more"
DETAIL_CHARS = 100
REASON_CHARS = 140
LINK_CHARS = 80
TOP_REASONS = 3
MATRIX_PAGE = "matrix.html"
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
SYNTHETIC = "synthetic"


def cell_vocabulary(cell: dict[str, Any]) -> str:
    """What the cell was tokenized on: `real:<package>@<version>` or `synthetic` (every cell before
    real vocabularies existed)."""
    return cell.get("vocabulary") or SYNTHETIC


def vocabularies(cells: Iterable[dict[str, Any]]) -> str:
    return ", ".join(sorted({cell_vocabulary(c) for c in cells})) or "—"


def in_char_tier(cell: dict[str, Any]) -> bool:
    """Cells that split inside tokens (re-chunking proxies): reported apart from batch and token tiers."""
    return cell.get("tier") == CHAR_TIER


INCREMENTAL = "incremental"  # the check name (contract.checks.incremental)


def incremental(cells: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Incremental streaming, read apart from correctness: how many cells passed the bound on withheld
    payload (failing or known broken for it), and the most any measured cell withheld (None: not measured)."""
    cells = list(cells)
    measured = [c["withheld"] for c in cells if c.get("withheld") is not None]
    over = [c for c in cells if any(f.get("check") == INCREMENTAL for f in c.get("failures") or [])]
    return {"cells": len(over), "worst": max(measured) if measured else None}


def correctness(cell: dict[str, Any]) -> dict[str, Any]:
    """The cell as correctness sees it: one that fails (or is known broken) only for incremental streaming
    counts as a pass in the scores, since the incremental column reports it."""
    checks = {f.get("check") for f in cell.get("failures") or []}
    if cell.get("outcome") in ("fail", "xfail") and checks == {INCREMENTAL}:
        return {**cell, "outcome": "pass"}
    return cell


def format_incremental(figure: dict[str, Any]) -> str:
    if figure["worst"] is None:
        return "—"
    if not figure["cells"]:
        return f"ok (≤{figure['worst']})"
    return f"holds {figure['worst']:,} ({figure['cells']} cells)"


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
                "vocabulary": vocabularies(cells),
                **count_outcomes(cells),
                "score": score(count_outcomes(correctness(c) for c in cells if not in_char_tier(c))),
                "char_score": score(count_outcomes(correctness(c) for c in cells if in_char_tier(c))),
                "incremental": incremental(cells),
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


def format_duration(seconds: Any) -> str:
    """`65.0 s`, `9 min 13 s`, or `—` when unknown (a merged run without every finish time)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "—"
    minutes, rest = divmod(round(seconds), 60)
    return f"{seconds:.1f} s" if seconds < 60 else f"{minutes} min {rest} s"


def _mode_order(cell: dict[str, Any]) -> int:
    return MODES.index(cell["mode"]) if cell["mode"] in MODES else len(MODES)


# --- links into the HTML matrix --------------------------------------------------------------------

_ANCHOR_SAFE = "/:"  # kept readable; anything else outside [A-Za-z0-9_.~-] is percent-encoded
_URL_SAFE = "/:?#[]@!$&'*+,;=%~"  # a URL's own delimiters; spaces, (), <>, quotes, `, |, \ and controls are encoded


def cell_id(cell: dict[str, Any]) -> str:
    """A cell's stable id, `<parser>:<case>:<mode>` (`vllm/kimi_k2:tool.single:tokens`), as pytest names it."""
    return f"{cell['parser']}:{cell['case']}:{cell['mode']}"


def row_anchor(parser: str) -> str:
    """The HTML id of a parser's matrix row, `parser-vllm/kimi_k2`: percent-encoded, so a valid id (no space)
    and a URL fragment as it is."""
    return "parser-" + quote(str(parser), safe=_ANCHOR_SAFE)


def cell_fragment(identifier: str) -> str:
    """The URL fragment that opens a cell's detail panel on load: `cell=` and the percent-encoded cell id."""
    return "cell=" + quote(identifier, safe=_ANCHOR_SAFE)


def matrix_href(fragment: str, page: str = MATRIX_PAGE) -> str:
    """A relative link into the matrix page (`matrix.html#cell=…`); `fragment` from row_anchor or cell_fragment."""
    return f"{page}#{fragment}"


def markdown_cell_link(cell: dict[str, Any], text: str | None = None, *, table: bool = True,
                       page: str = MATRIX_PAGE) -> str:
    """A markdown link to a cell's detail panel; its text (the cell id unless given) is inert and reads fine
    where the matrix page is not reachable. `table`: the link sits in a table cell (pipes escaped)."""
    label = inert_markdown(cell_id(cell) if text is None else text, table=table)
    return f"[{label}]({matrix_href(cell_fragment(cell_id(cell)), page)})"


def markdown_parser_link(parser: str, *, table: bool = True, page: str = MATRIX_PAGE) -> str:
    """A markdown link to a parser's matrix row, its inert name as text."""
    return f"[{inert_markdown(parser, table=table)}]({matrix_href(row_anchor(parser), page)})"


def http_url(link: Any) -> str | None:
    """`link` percent-encoded for a markdown link destination if it is an absolute http(s) URL, else None.

    Spaces, parentheses, angle brackets, quotes, backticks, pipes, backslashes and controls are encoded, so
    the URL cannot close the link early or break a table row.
    """
    if not isinstance(link, str) or not re.match(r"https?://[^/\s]", link, re.IGNORECASE):
        return None
    try:
        host = urlsplit(link).hostname
    except ValueError:
        return None
    return quote(link, safe=_URL_SAFE) if host else None


def markdown_reason_link(link: Any, *, table: bool = True) -> str:
    """A KnownBroken `link`: a markdown link when it is an http(s) URL, inert text otherwise."""
    text = inert_markdown(str(link), LINK_CHARS, table=table)
    url = http_url(link)
    return f"[{text}]({url})" if url else text


# --- what needs attention ------------------------------------------------------------------------


def failing_cells(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells whose outcome fails the run, in file order."""
    return [cell for cell in results["cells"] if cell["outcome"] in RUN_FAILING]


def needs_attention(cell: dict[str, Any]) -> bool:
    """A cell that fails the run, or a KnownBroken entry nobody has triaged yet."""
    return cell["outcome"] in RUN_FAILING or bool(cell.get("untriaged"))


@dataclass(frozen=True)
class AttentionGroup:
    """The cells of one parser and case with one outcome that need attention, modes in matrix order."""

    parser: str
    case: str
    outcome: str
    untriaged: bool
    cells: tuple[dict[str, Any], ...]

    @property
    def first(self) -> dict[str, Any]:
        return self.cells[0]

    @property
    def modes(self) -> str:
        return ", ".join(str(cell["mode"]) for cell in self.cells)

    @property
    def label(self) -> str:
        return f"{self.outcome}, untriaged" if self.untriaged else self.outcome


def attention_groups(results: dict[str, Any]) -> list[AttentionGroup]:
    """Cells needing attention grouped by parser, case, outcome and untriaged, in order of first appearance."""
    grouped: dict[tuple[str, str, str, bool], list[dict[str, Any]]] = {}
    for cell in results["cells"]:
        if needs_attention(cell):
            key = (cell["parser"], cell["case"], cell["outcome"], bool(cell.get("untriaged")))
            grouped.setdefault(key, []).append(cell)
    return [AttentionGroup(*key, tuple(sorted(cells, key=_mode_order))) for key, cells in grouped.items()]


def detail_text(cell: dict[str, Any]) -> str:
    """Why a cell failed, on one line: its first failed check, else its error or reason."""
    if cell.get("failures"):
        first = cell["failures"][0]
        text = f"{first['check']}: {first['detail']}"
    else:
        text = cell.get("error") or cell.get("reason") or ""
    return " ".join(str(text).split())


def first_detail(cell: dict[str, Any]) -> str:
    """One line saying why a cell failed, at most DETAIL_CHARS characters (raw: make it inert to show it)."""
    return clip(detail_text(cell), DETAIL_CHARS)


# --- known broken --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReasonCount:
    """One KnownBroken reason (and link) of a parser, how many of its cells carry it, and the first of them."""

    reason: str | None
    link: str | None
    count: int
    example: dict[str, Any]


@dataclass(frozen=True)
class KnownBroken:
    """A parser's known-broken (xfail) cells: how many, their most frequent reasons, how many other reasons."""

    parser: str
    count: int
    reasons: tuple[ReasonCount, ...]
    other_reasons: int


def known_broken(results: dict[str, Any], top: int = TOP_REASONS) -> list[KnownBroken]:
    """Per parser with xfail cells, in the parsers' order: the count and the `top` reasons, most frequent first."""
    by_parser: dict[str, list[dict[str, Any]]] = {}
    for cell in results["cells"]:
        if cell["outcome"] == "xfail":
            by_parser.setdefault(cell["parser"], []).append(cell)
    out = []
    for parser in all_parsers(results):
        cells = by_parser.get(parser["parser"])
        if not cells:
            continue
        counts = Counter((cell.get("reason"), cell.get("link")) for cell in cells)
        examples: dict[tuple[Any, Any], dict[str, Any]] = {}
        for cell in cells:
            examples.setdefault((cell.get("reason"), cell.get("link")), cell)
        reasons = tuple(ReasonCount(reason, link, n, examples[reason, link])
                        for (reason, link), n in counts.most_common(top))
        out.append(KnownBroken(parser["parser"], len(cells), reasons, max(len(counts) - top, 0)))
    return out


# --- run metadata --------------------------------------------------------------------------------


def runs_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Each engine run behind a document: the merged runs, or the document's own run."""
    return list(run.get("runs") or [run])


def _version(info: dict[str, Any]) -> str:
    if not info.get("available", True):
        return "not installed"
    return str(info.get("version") or "version unknown")


def _engine_versions(run: dict[str, Any]) -> tuple[str, str]:
    """A run's engines and their versions, each comma-joined (a run may grade several engines)."""
    engines = run.get("engines") or {}
    versions = [_version(info or {}) for info in engines.values()]
    return ", ".join(map(str, engines)) or "—", ", ".join(versions) or "—"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def wall_span(runs: list[dict[str, Any]]) -> tuple[str, str, float] | None:
    """(earliest started, latest finished, seconds between) when every run has ISO-8601 bounds, else None."""
    starts = [(_parse_time(run.get("started")), run.get("started")) for run in runs]
    ends = [(_parse_time(run.get("finished")), run.get("finished")) for run in runs]
    if not runs or any(moment is None for moment, _ in starts + ends):
        return None
    first, last = min(starts, key=lambda pair: pair[0]), max(ends, key=lambda pair: pair[0])
    return first[1], last[1], round((last[0] - first[0]).total_seconds(), 2)


# --- rendering -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    """How a summary shows untrusted text and links: terminal (plain) or markdown."""

    tablefmt: str
    text: Callable[..., str]  # (text, limit=None, *, table=True) -> inert text
    parser: Callable[..., str]  # (parser, *, table=True) -> its name, linked to its matrix row
    cell: Callable[..., str]  # (cell, text, *, table=True) -> text, linked to the cell's detail panel
    link: Callable[..., str]  # (link, *, table=True) -> a KnownBroken link

    def table(self, rows: list[list[Any]], headers: list[str]) -> str:
        return tabulate(rows, headers=headers, tablefmt=self.tablefmt, disable_numparse=True)


def _terminal_text(text: Any, limit: int | None = None, *, table: bool = True) -> str:
    return inert_terminal(str(text), limit)


def _markdown_text(text: Any, limit: int | None = None, *, table: bool = True) -> str:
    return inert_markdown(str(text), limit, table=table)


TERMINAL = _Style(
    "simple",
    _terminal_text,
    lambda parser, *, table=True: inert_terminal(str(parser)),
    lambda cell, text, *, table=True: inert_terminal(str(text)),
    lambda link, *, table=True: inert_terminal(str(link)),
)
MARKDOWN = _Style(
    "github",
    _markdown_text,
    markdown_parser_link,
    lambda cell, text, *, table=True: markdown_cell_link(cell, str(text), table=table),
    markdown_reason_link,
)


def _count(value: Any, style: _Style) -> str:
    return str(value) if isinstance(value, int) else style.text(value if value is not None else "—")


def _runs_block(run: dict[str, Any], style: _Style) -> str:
    """One row per engine run (engine, version, start, duration, commit), plus the wall time of a merge."""
    rows = []
    for one in runs_of(run):
        engines, versions = _engine_versions(one)
        rows.append([style.text(engines), style.text(versions), style.text(one.get("started") or "—"),
                     format_duration(one.get("duration_s")), style.text(str(one.get("commit") or "no commit")[:12]),
                     style.text(one.get("hypothesis_profile") or "—"), _count(one.get("workers"), style)])
    block = style.table(rows, ["engine", "version", "started", "duration", "commit", "hypothesis", "workers"])
    if "runs" in run:
        block += (f"\n\n{len(run['runs'])} runs merged · wall time {format_duration(run.get('duration_s'))}"
                  + (" (earliest start to latest finish)" if run.get("duration_s") is not None
                     else " unknown: a run has no finish time"))
    return block


def _attention_section(results: dict[str, Any], style: _Style) -> tuple[str, str]:
    failing = len(failing_cells(results))
    untriaged = sum(1 for cell in results["cells"] if needs_attention(cell)) - failing
    title = f"Needs attention — Failing cells ({failing})" + (
        f" · untriaged known-broken ({untriaged})" if untriaged else "")
    groups = attention_groups(results)
    if not groups:
        return title, "No failing cells. No untriaged known-broken cells."
    shown = groups[:MAX_FAILING_LINES]
    body = style.table(
        [[style.parser(g.parser), style.cell(g.first, g.case), style.text(g.label), style.text(g.modes),
          style.text(detail_text(g.first), DETAIL_CHARS)] for g in shown],
        ["parser", "case", "outcome", "modes", "detail"],
    )
    if len(groups) > len(shown):
        rest = groups[len(shown):]
        body += f"\n\n… and {len(rest)} more ({sum(len(g.cells) for g in rest)} cells)"
    return title, body


def _parsers_section(results: dict[str, Any], style: _Style) -> tuple[str, str]:
    rows = parser_scores(results)
    shown = [o for o in OUTCOMES if any(row[o] for row in rows)]
    table = style.table(
        [[style.parser(row["parser"]), style.text(row["family"]), style.text(row["vocabulary"]),
          *(row[o] for o in shown), format_score(row["score"]), format_score(row["char_score"]),
          format_incremental(row["incremental"]), format_slowdown(row["slowest"])]
         for row in rows],
        ["parser", "family", "vocabulary", *shown, "score", "char tier", "incremental", "speed"],
    )
    return "Parsers", table


def _reason_line(entry: ReasonCount, style: _Style) -> str:
    reason = "(no reason recorded)" if entry.reason is None else style.text(entry.reason, REASON_CHARS, table=False)
    line = f"{entry.count} × {reason} · e.g. {style.cell(entry.example, cell_id(entry.example), table=False)}"
    return line + (f" · {style.link(entry.link, table=False)}" if entry.link else "")


def _known_broken_section(results: dict[str, Any], style: _Style) -> tuple[str, str] | None:
    entries = known_broken(results)
    if not entries:
        return None
    lines = []
    for entry in entries:
        lines.append(f"- {style.parser(entry.parser, table=False)}: {entry.count} known broken")
        lines += [f"  - {_reason_line(reason, style)}" for reason in entry.reasons]
        if entry.other_reasons:
            lines.append(f"  - and {entry.other_reasons} other reasons")
    return f"Known broken (top {TOP_REASONS} reasons per parser)", "\n".join(lines)


def _coverage_markdown(entry: KindCoverage) -> str:
    """A coverage line with every registered name inert (KindCoverage.line() for markdown)."""
    def names(items: tuple[str, ...]) -> str:
        return ", ".join(inert_markdown(item, table=False) for item in items) or "none"

    engine = f"{entry.engine} {entry.version or ''}".strip()
    parts = [f"{inert_markdown(engine, table=False)} · {KIND_LABELS.get(entry.kind, entry.kind)}: "
             f"{entry.registered} registered",
             "graded: " + names(entry.graded)]
    if entry.aliases:
        parts.append("aliases: " + names(entry.aliases))
    parts.append(f"no family fixture yet ({len(entry.missing)}): " + names(entry.missing))
    return " · ".join(parts)


def _coverage_section(results: dict[str, Any], style: _Style) -> tuple[str, str] | None:
    entries = engine_coverage(results["run"])
    if not entries:
        return None
    lines = [_coverage_markdown(e) if style is MARKDOWN else inert_terminal(e.line()) for e in entries]
    return "Coverage of engine registries", "\n".join(f"- {line}" for line in lines)


def _sections(results: dict[str, Any], style: _Style) -> list[tuple[str, str]]:
    """(title, body) pairs shared by the terminal and markdown summaries, most urgent first."""
    counts = outcome_counts(results)
    sections = [
        _attention_section(results, style),
        ("Outcomes", style.table([list(counts.values())], list(counts))),
        _parsers_section(results, style),
        _known_broken_section(results, style),
        _coverage_section(results, style),
    ]
    return [section for section in sections if section is not None]


def terminal_summary(results: dict[str, Any]) -> str:
    """Plain-text summary: runs, what needs attention, outcome counts, parsers, known broken, coverage."""
    parts = [_runs_block(results["run"], TERMINAL)]
    parts += [f"{title}\n{body}" for title, body in _sections(results, TERMINAL)]
    return "\n\n".join(parts) + "\n"


def markdown_summary(results: dict[str, Any]) -> str:
    """GitHub-flavoured markdown summary, for a CI step summary or a PR comment; model text is inert and
    links point into the matrix page beside it (`matrix.html#cell=…`)."""
    parts = ["## Parser conformance", _runs_block(results["run"], MARKDOWN)]
    parts += [f"### {title}\n\n{body}" for title, body in _sections(results, MARKDOWN)]
    return "\n\n".join(parts) + "\n"
