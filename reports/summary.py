"""Terminal and markdown summaries of a results file: what needs attention first, then per parser."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from tabulate import tabulate

from contract.grading.outcome import Outcome
from contract.grading.record import CellRecord
from contract.run.record import EngineRun, RunRecord
from reports.coverage import KIND_LABELS, KindCoverage, engine_coverage, engine_shares
from reports.load import MODES, OUTCOMES, RESPONSES_MODES, RUN_FAILING
from reports.text import clip, inert_markdown, inert_terminal

MAX_FAILING_LINES = 40  # attention rows (one per parser, case and outcome) before "… and N more"
DETAIL_CHARS = 100
REASON_CHARS = 140
LINK_CHARS = 80
TOP_BUGS = 10  # per engine, in the summary
MATRIX_PAGE = "matrix.html"
# Speed is a figure, never a verdict: a parser's slowdown is its CPU time over the reference parser's on the
# same input (batch and one token per delta), read only from cells where the reference needed at least
# MEASURABLE_S: against a few hundred microseconds, a ratio measures timer noise or a parser's one-time
# start-up (loading an encoding on its first parse), not its speed. At SLOW_FACTOR and above it is flagged.
SLOW_FACTOR = 20.0
MEASURABLE_S = 0.002


def count_outcomes(cells: Iterable[CellRecord]) -> dict[str, int]:
    """Cells by outcome, every outcome present, in the schema's order."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for cell in cells:
        counts[cell.outcome] += 1
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
        if cell.parser not in known:
            known.add(cell.parser)
            parsers.append({"engine": cell.engine, "parser": cell.parser, "family": cell.family})
    return parsers


CHAR_TIER = "char"
SYNTHETIC = "synthetic"


def cell_vocabulary(cell: CellRecord) -> str:
    """What the cell was tokenized on: `real:<package>@<version>` or `synthetic` (every cell before
    real vocabularies existed)."""
    return cell.vocabulary or SYNTHETIC


def vocabularies(cells: Iterable[CellRecord]) -> str:
    return ", ".join(sorted({cell_vocabulary(c) for c in cells})) or "—"


def in_char_tier(cell: CellRecord) -> bool:
    """Cells that split inside tokens (re-chunking proxies): reported apart from batch and token tiers."""
    return cell.tier == CHAR_TIER


INCREMENTAL = "incremental"  # the check name (contract.grading.checks.incremental)


def incremental(cells: Iterable[CellRecord]) -> dict[str, Any]:
    """Incremental streaming, read apart from correctness: how many cells passed the bound on withheld
    payload (failing or known broken for it), and the most any measured cell withheld (None: not measured)."""
    cells = list(cells)
    measured = [c.withheld for c in cells if c.withheld is not None]
    over = [c for c in cells if any(f.check == INCREMENTAL for f in c.failures or [])]
    return {"cells": len(over), "worst": max(measured) if measured else None}


def correctness(cell: CellRecord) -> CellRecord:
    """The cell as correctness sees it: one that fails (or is known broken) only for incremental streaming
    counts as a pass in the scores, since the incremental column reports it."""
    checks = {f.check for f in cell.failures or []}
    if cell.outcome in ("fail", "xfail") and checks == {INCREMENTAL}:
        return replace(cell, outcome=Outcome.PASS)
    return cell


def format_incremental(figure: dict[str, Any]) -> str:
    if figure["worst"] is None:
        return "—"
    if not figure["cells"]:
        return f"ok (≤{figure['worst']})"
    return f"holds {figure['worst']:,} ({figure['cells']} cells)"


def on_responses(cell: CellRecord) -> bool:
    """Graded on the Responses API, not Chat Completions."""
    return cell.mode in RESPONSES_MODES


def parser_scores(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per parser: parser, family, cells by outcome (all tiers), `score` over Chat Completions' batch and
    token tiers, `char_score` over its char tier and `responses_score` over the Responses API's modes (percent, or
    None where nothing was graded: an engine that does not serve that API)."""
    cells_by_parser: dict[str, list[CellRecord]] = {}
    for cell in results["cells"]:
        cells_by_parser.setdefault(cell.parser, []).append(cell)
    rows = []
    for parser in all_parsers(results):
        cells = cells_by_parser.get(parser["parser"], [])
        rows.append(
            {
                "parser": parser["parser"],
                "family": parser["family"],
                "vocabulary": vocabularies(cells),
                **count_outcomes(cells),
                "score": score(count_outcomes(correctness(c) for c in cells
                                              if not in_char_tier(c) and not on_responses(c))),
                "char_score": score(count_outcomes(correctness(c) for c in cells if in_char_tier(c))),
                "responses_score": score(count_outcomes(correctness(c) for c in cells if on_responses(c))),
                "incremental": incremental(cells),
                "slowest": slowest(cells),
            }
        )
    return rows


def slowest(cells: Iterable[CellRecord]) -> CellRecord | None:
    """The cell with the largest measurable slowdown against the reference parser, or None."""
    measured = [c for c in cells if c.slowdown is not None and (c.reference_cpu_s or 0) >= MEASURABLE_S]
    return max(measured, key=lambda c: c.slowdown, default=None)


def format_slowdown(cell: CellRecord | None) -> str:
    """`×3.2`, `×140 slow` at or above SLOW_FACTOR, `—` when not measured."""
    if cell is None:
        return "—"
    factor = cell.slowdown
    text = f"×{factor:.1f}" if factor < 10 else f"×{factor:.0f}"
    return text + (" slow" if factor >= SLOW_FACTOR else "")


def format_duration(seconds: Any) -> str:
    """`65.0 s`, `9 min 13 s`, or `—` when unknown (a merged run without every finish time)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "—"
    minutes, rest = divmod(round(seconds), 60)
    return f"{seconds:.1f} s" if seconds < 60 else f"{minutes} min {rest} s"


def _mode_order(cell: CellRecord) -> int:
    return MODES.index(cell.mode) if cell.mode in MODES else len(MODES)


# --- links into the HTML matrix --------------------------------------------------------------------

_ANCHOR_SAFE = "/:"  # kept readable; anything else outside [A-Za-z0-9_.~-] is percent-encoded
_URL_SAFE = "/:?#[]@!$&'*+,;=%~"  # a URL's own delimiters; spaces, (), <>, quotes, `, |, \ and controls are encoded


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


def markdown_cell_link(cell: CellRecord, text: str | None = None, *, table: bool = True,
                       page: str = MATRIX_PAGE) -> str:
    """A markdown link to a cell's detail panel; its text (the cell id unless given) is inert and reads fine
    where the matrix page is not reachable. `table`: the link sits in a table cell (pipes escaped)."""
    label = inert_markdown(cell.id if text is None else text, table=table)
    return f"[{label}]({matrix_href(cell_fragment(cell.id), page)})"


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


def failing_cells(results: dict[str, Any]) -> list[CellRecord]:
    """The cells whose outcome fails the run, in file order."""
    return [cell for cell in results["cells"] if cell.outcome in RUN_FAILING]


def needs_attention(cell: CellRecord) -> bool:
    """A cell that fails the run, or a KnownBroken entry nobody has triaged yet."""
    return cell.outcome in RUN_FAILING or bool(cell.untriaged)


@dataclass(frozen=True)
class AttentionGroup:
    """The cells of one parser and case with one outcome that need attention, modes in matrix order."""

    parser: str
    case: str
    outcome: str
    untriaged: bool
    cells: tuple[CellRecord, ...]

    @property
    def first(self) -> CellRecord:
        return self.cells[0]

    @property
    def modes(self) -> str:
        return ", ".join(str(cell.mode) for cell in self.cells)

    @property
    def label(self) -> str:
        return f"{self.outcome}, untriaged" if self.untriaged else self.outcome


def attention_groups(results: dict[str, Any]) -> list[AttentionGroup]:
    """Cells needing attention grouped by parser, case, outcome and untriaged, in order of first appearance."""
    grouped: dict[tuple[str, str, str, bool], list[CellRecord]] = {}
    for cell in results["cells"]:
        if needs_attention(cell):
            key = (cell.parser, cell.case, cell.outcome, bool(cell.untriaged))
            grouped.setdefault(key, []).append(cell)
    return [AttentionGroup(*key, tuple(sorted(cells, key=_mode_order))) for key, cells in grouped.items()]


def detail_text(cell: CellRecord) -> str:
    """Why a cell failed, on one line: its first failed check, else its error or reason."""
    if cell.failures:
        first = cell.failures[0]
        text = f"{first.check}: {first.detail}"
    else:
        text = cell.error or cell.reason or ""
    return " ".join(str(text).split())


def first_detail(cell: CellRecord) -> str:
    """One line saying why a cell failed, at most DETAIL_CHARS characters (raw: make it inert to show it)."""
    return clip(detail_text(cell), DETAIL_CHARS)


# --- known broken --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BugCount:
    """One KnownBroken bug of an engine: its reason and link and the known-broken (xfail) cells that cite it (a
    file written before bugs had ids groups its cells by reason, `id` None)."""

    engine: str
    id: str | None
    reason: str | None
    link: str | None
    untriaged: bool
    cells: tuple[CellRecord, ...]  # in the results' order

    @property
    def label(self) -> str:
        return self.id or "(no bug id)"

    @property
    def count(self) -> int:
        return len(self.cells)

    @property
    def parsers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(cell.parser for cell in self.cells))

    @property
    def example(self) -> CellRecord:
        return self.cells[0]


@dataclass(frozen=True)
class EngineBugs:
    """An engine's known-broken cells grouped by bug, most cells first; `bugs` holds the `top` of them."""

    engine: str
    cells: int
    bugs: tuple[BugCount, ...]
    other_bugs: int


def known_broken(results: dict[str, Any], top: int = TOP_BUGS) -> list[EngineBugs]:
    """Per engine with xfail cells, in the parsers' order: their count and the `top` bugs by cells cited."""
    by_engine: dict[str, list[CellRecord]] = {}
    for cell in results["cells"]:
        if cell.outcome == "xfail":
            by_engine.setdefault(cell.engine, []).append(cell)
    out = []
    for engine in dict.fromkeys(p["engine"] for p in all_parsers(results)):
        cells = by_engine.get(engine)
        if cells:
            bugs = _bug_counts(engine, cells, results["run"].engines.get(engine))
            out.append(EngineBugs(engine, len(cells), tuple(bugs[:top]), max(len(bugs) - top, 0)))
    return out


def _bug_counts(engine: str, cells: list[CellRecord], info: EngineRun | None) -> list[BugCount]:
    """The engine's bugs by the cells citing them; a cell of a file written before bugs had ids counts under
    its reason and link (a bug with no id)."""
    table = info.bugs if info else {}
    groups: dict[tuple[str | None, str | None, str | None], list[CellRecord]] = {}  # (id, reason, link)
    for cell in cells:
        for key in [(bug, None, None) for bug in cell.bugs] or [(None, cell.reason, cell.link)]:
            groups.setdefault(key, []).append(cell)
    counts = []
    for (bug_id, reason, link), cited in groups.items():
        bug = table.get(bug_id) if bug_id is not None else None
        if bug_id is not None:
            reason, link = (bug.reason, bug.link) if bug else (None, None)
        counts.append(BugCount(engine, bug_id, reason, link, bool(bug and bug.untriaged), tuple(cited)))
    return sorted(counts, key=lambda b: -b.count)


def repro_command(cell: CellRecord, run: RunRecord) -> str:
    """The command that writes a standalone repro of the cell (an installed engine), else its rerun command."""
    info = run.engines.get(cell.engine)
    if info and info.build:
        return f"nox -s repro -- {cell.id}"
    return str(cell.rerun or f"(no rerun command for {cell.id})")


# --- run metadata --------------------------------------------------------------------------------


def _version(info: EngineRun) -> str:
    if not info.available:
        return "not installed"
    return str(info.version or "version unknown")


def _engine_versions(run: RunRecord) -> tuple[str, str]:
    """A run's engines and their versions, each comma-joined (a run may grade several engines)."""
    engines = run.engines
    versions = [_version(info) for info in engines.values()]
    return ", ".join(map(str, engines)) or "—", ", ".join(versions) or "—"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def wall_span(runs: Sequence[RunRecord]) -> tuple[str, str, float] | None:
    """(earliest started, latest finished, seconds between) when every run has ISO-8601 bounds, else None."""
    starts = [(_parse_time(run.started), run.started) for run in runs]
    ends = [(_parse_time(run.finished), run.finished) for run in runs]
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


def _runs_block(run: RunRecord, style: _Style) -> str:
    """One row per engine run (engine, version, start, duration, commit), plus the wall time of a merge."""
    rows = []
    for one in run.each:
        engines, versions = _engine_versions(one)
        rows.append([style.text(engines), style.text(versions), style.text(one.started or "—"),
                     format_duration(one.duration_s), style.text(str(one.commit or "no commit")[:12]),
                     style.text(one.hypothesis_profile or "—"), _count(one.workers, style)])
    block = style.table(rows, ["engine", "version", "started", "duration", "commit", "hypothesis", "workers"])
    if run.runs is not None:
        block += (f"\n\n{len(run.runs)} runs merged · wall time {format_duration(run.duration_s)}"
                  + (" (earliest start to latest finish)" if run.duration_s is not None
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
          format_score(row["responses_score"]), format_incremental(row["incremental"]),
          format_slowdown(row["slowest"])]
         for row in rows],
        ["parser", "family", "vocabulary", *shown, "score", "char tier", "Responses", "incremental", "speed"],
    )
    return "Parsers", table


def _bug_line(bug: BugCount, run: dict[str, Any], style: _Style) -> str:
    reason = "(no reason recorded)" if bug.reason is None else style.text(bug.reason, REASON_CHARS, table=False)
    parsers = f"{len(bug.parsers)} parsers" if len(bug.parsers) > 1 else style.parser(bug.parsers[0], table=False)
    label = style.text(bug.label, table=False) + (" (untriaged)" if bug.untriaged else "")
    cells = f"{bug.count} cell" + ("s" if bug.count != 1 else "")
    line = (f"{label}: {cells}, {parsers} · {reason} · e.g. {style.cell(bug.example, bug.example.id, table=False)} · "
            f"repro: {style.text(repro_command(bug.example, run), table=False)}")
    return line + (f" · {style.link(bug.link, table=False)}" if bug.link else "")


def _known_broken_section(results: dict[str, Any], style: _Style) -> tuple[str, str] | None:
    engines = known_broken(results)
    if not engines:
        return None
    lines = []
    for engine in engines:
        lines.append(f"- {style.text(engine.engine, table=False)}: {engine.cells} known-broken cells")
        lines += [f"  - {_bug_line(bug, results['run'], style)}" for bug in engine.bugs]
        if engine.other_bugs:
            lines.append(f"  - and {engine.other_bugs} other bugs (the matrix page lists every one)")
    return f"Known broken, by bug (the {TOP_BUGS} that explain most cells, per engine)", "\n".join(lines)


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
    parts.append(f"not graded ({len(entry.missing)}): " + names(entry.missing))
    parts += [f"{names(listed)}: {inert_markdown(reason, table=False)}" for reason, listed in entry.why_missing]
    return " · ".join(parts)


def _coverage_section(results: dict[str, Any], style: _Style) -> tuple[str, str] | None:
    entries = engine_coverage(results["run"])
    if not entries:
        return None
    shares = [share.line() for share in engine_shares(results["run"])]
    lines = [inert_markdown(s, table=False) if style is MARKDOWN else inert_terminal(s) for s in shares]
    lines += [_coverage_markdown(e) if style is MARKDOWN else inert_terminal(e.line()) for e in entries]
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
