"""The self-contained HTML coverage matrix."""

from __future__ import annotations

import difflib
import json
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from contract.grading.outcome import SEVERITY
from contract.grading.record import CellRecord
from contract.run.record import EngineRun, RunRecord
from contract.run.schema import rerun_of
from reports.coverage import engine_coverage, engine_shares
from reports.load import MODES, OUTCOMES
from reports.summary import (
    SLOW_FACTOR,
    SYNTHETIC,
    all_parsers,
    cell_fragment,
    cell_vocabulary,
    count_outcomes,
    format_duration,
    format_incremental,
    format_score,
    format_slowdown,
    http_url,
    in_char_tier,
    known_broken,
    on_responses,
    outcome_counts,
    parser_scores,
    repro_command,
    row_anchor,
    score,
)

SYMBOLS = {
    "pass": "✓",
    "fail": "✗",
    "xfail": "⊘",
    "fixed": "↑",
    "changed": "Δ",
    "n/a": "–",
    "unimplemented": "?",
    "error": "!",
    "timeout": "⧗",
    "skip": "·",
}
MEANINGS = {
    "pass": "passes",
    "fail": "fails",
    "xfail": "known broken, unchanged",
    "fixed": "known broken, now passes",
    "changed": "known broken, differently",
    "n/a": "not applicable to the format",
    "unimplemented": "family takes no position",
    "error": "adapter or parser crashed",
    "timeout": "hung: a parser call made no progress",
    "skip": "engine not installed",
}
KIND_ORDER = ("tool", "reasoning", "harmony")
_MESSAGE_KEYS = ("content", "reasoning", "tool_calls", "finish_reason")
_CALL_KEYS = ("name", "arguments", "id")
_SHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)


def worst_outcome(outcomes: Iterable[str]) -> str:
    """The most severe of some outcomes (error first, n/a last)."""
    return min(outcomes, key=SEVERITY.index)


def reveal(text: str) -> list[tuple[str, bool]]:
    """Split text into (piece, is_marker) runs with invisible characters replaced by visible markers.

    Newline -> ↵ plus a real line break, tab -> →, leading/trailing spaces of a line -> ·, any other
    control, format (zero-width, bidi), separator or unassigned character -> ⟨U+XXXX⟩.
    """
    runs: list[tuple[str, bool]] = []

    def add(piece: str, marker: bool) -> None:
        if runs and runs[-1][1] == marker:
            runs[-1] = (runs[-1][0] + piece, marker)
        else:
            runs.append((piece, marker))

    lines = text.split("\n")
    for number, line in enumerate(lines):
        body = line.strip(" ")
        lead = len(line) - len(line.lstrip(" ")) if body else len(line)
        trail = len(line) - len(line.rstrip(" ")) if body else 0
        if lead:
            add("·" * lead, True)
        for char in line[lead : len(line) - trail]:
            if char == "\t":
                add("→", True)
            elif char != " " and unicodedata.category(char) in _SHOWN_CATEGORIES:
                add(f"⟨U+{ord(char):04X}⟩", True)
            else:
                add(char, False)
        if trail:
            add("·" * trail, True)
        if number < len(lines) - 1:
            add("↵", True)
            add("\n", False)
    return runs


def _arguments(value: Any) -> Any:
    """Observed arguments as a JSON value when they are a JSON string, for a readable diff."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _message_lines(message: dict[str, Any], observed: bool, ids: bool) -> list[str]:
    """A message as pretty JSON lines; tool-call ids left out when `ids` is false."""
    shown = {key: message.get(key) for key in _MESSAGE_KEYS}
    if isinstance(shown["tool_calls"], list):
        keys = _CALL_KEYS if ids else _CALL_KEYS[:2]
        shown["tool_calls"] = [
            {
                key: _arguments(call.get(key)) if observed and key == "arguments" else call.get(key)
                for key in keys
            }
            for call in shown["tool_calls"]
        ]
    return json.dumps(shown, indent=2, ensure_ascii=False).splitlines()


def _context_lines(lines: list[str]) -> list[tuple[str, str]]:
    return [("ctx", "  " + line) for line in lines]


def _line_diff(old: list[str], new: list[str]) -> list[tuple[str, str]]:
    """Full-context line diff as (css class, line) pairs."""
    lines: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [("ctx", "  " + line) for line in old[i1:i2]]
        else:
            lines += [("del", "- " + line) for line in old[i1:i2]]
            lines += [("add", "+ " + line) for line in new[j1:j2]]
    return lines


def _unified_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff string as (css class, line) pairs."""
    classes = {"+": "add", "-": "del", "@": "hunk"}
    return [
        ("hunk" if line.startswith(("+++", "---")) else classes.get(line[:1], "ctx"), line)
        for line in diff.splitlines()
    ]


def diff_blocks(shown: dict[str, Any]) -> list[dict[str, Any]]:
    """Expected outcomes vs the observed message (one block per acceptable outcome), plus a `changed` diff, from
    a cell's `_diff_input`.

    Tool-call ids are compared only when the expected outcome pins them (a native id scheme).
    """
    expected, observed = shown.get("expected") or [], shown.get("observed")
    blocks = []
    for number, alternative in enumerate(expected):
        label = alternative.get("label") or f"#{number + 1}"
        ids = any(call.get("id") is not None for call in alternative.get("tool_calls") or [])
        wanted = _message_lines(alternative, observed=False, ids=ids)
        if observed is None:
            blocks.append(
                {"title": f"expected “{label}” (nothing observed)", "lines": _context_lines(wanted)}
            )
        else:
            got = _message_lines(observed, observed=True, ids=ids)
            blocks.append(
                {"title": f"expected “{label}” (−) vs observed (+)", "lines": _line_diff(wanted, got)}
            )
    if observed is not None and not expected:
        lines = _context_lines(_message_lines(observed, observed=True, ids=True))
        blocks.append({"title": "observed", "lines": lines})
    if shown.get("diff"):
        blocks.append({"title": "recorded (−) vs now observed (+)", "lines": _unified_lines(shown["diff"])})
    return blocks


QUIET = ("pass", "n/a", "skip")  # outcomes whose detail shows no diff: keeps the page small


class _Values:
    """What the page holds once and a mode's detail names by index: inputs, contexts, diffs, chunkings, reasons
    and failures repeat across modes, parsers and engines (a family's chunkings are the same for every parser)."""

    def __init__(self) -> None:
        self.table: list[Any] = []
        self._index: dict[str, int] = {}

    def ref(self, kind: str, raw: Any, shown: Callable[[Any], Any] | None = None) -> int:
        """The index of `shown(raw)` (`raw` itself by default), computed once per distinct `raw` of a kind."""
        key = kind + json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.table)
            self.table.append(raw if shown is None else shown(raw))
        return index

    def maybe(self, kind: str, raw: Any, shown: Callable[[Any], Any] | None = None) -> int | None:
        return None if raw is None else self.ref(kind, raw, shown)


def _diff_input(cell: CellRecord) -> dict[str, Any]:
    """What `diff_blocks` reads of a cell; nothing for outcomes whose detail shows no diff."""
    if cell.outcome in QUIET:
        return {}
    return {"expected": cell.expected, "observed": cell.observed, "diff": cell.diff}


def _shown_text(text: str) -> str | list[tuple[str, bool]]:
    """`reveal(text)`, or the text itself when nothing in it needs revealing (the page reads both)."""
    runs = reveal(text)
    if not runs:
        return ""
    return runs[0][0] if len(runs) == 1 and not runs[0][1] else runs


def _mode_detail(cell: CellRecord, values: _Values, rerun_template: str | None) -> dict[str, Any]:
    """What the page's script shows of a mode; keys without a value (None, False) are left out, and the rerun
    command too when the engine's template gives it."""
    source = cell.input
    if source is not None:
        token_ids = source.get("token_ids")
        source = {
            "text": values.ref("input", source.get("text") or "", _shown_text),
            "tokens": None if token_ids is None else len(token_ids),
            "stop": source.get("stop"),
            "context": values.ref("context", source.get("context") or {},
                                  lambda context: json.dumps(context, indent=2, ensure_ascii=False)),
        }
    rerun = cell.rerun
    if rerun_template and rerun == rerun_of(rerun_template, cell.parser, cell.case, cell.mode):
        rerun = None
    detail = {
        "mode": cell.mode,
        "tier": cell.tier,
        "outcome": cell.outcome,
        "failures": values.ref("list", [failure.to_json() for failure in cell.failures]),
        "notes": values.ref("list", list(cell.notes)),
        "reason": values.maybe("text", cell.reason),
        "link": cell.link,
        "untriaged": bool(cell.untriaged),
        "bugs": list(cell.bugs) or None,
        "input": source,
        "diff": values.ref("diff", _diff_input(cell), lambda shown: diff_blocks(shown) if shown else []),
        "chunking": values.maybe("chunking", cell.chunking, lambda deltas: [_shown_text(d) for d in deltas]),
        "holdback": cell.holdback,
        "examples": cell.examples,
        "duration_s": cell.duration_s,
        "parse_cpu_s": cell.parse_cpu_s,
        "slowdown": cell.slowdown,
        "error": values.maybe("text", cell.error),
        "rerun": rerun,
    }
    return {key: value for key, value in detail.items() if value is not None and value is not False}


def _mode_key(cell: CellRecord) -> tuple[int, str]:
    return (MODES.index(cell.mode) if cell.mode in MODES else len(MODES), cell.mode)


def script_json(value: Any) -> Markup:
    """JSON safe to place inside a <script> element: no `<`, `>` or `&` survive."""
    text = json.dumps(value, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _case_groups(cases: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Cases grouped by kind: tool, reasoning, harmony, then any other kind; catalog order within a kind."""
    kinds = list(KIND_ORDER) + sorted({case["kind"] for case in cases} - set(KIND_ORDER))
    groups = [(kind, [case for case in cases if case["kind"] == kind]) for kind in kinds]
    return [(kind, members) for kind, members in groups if members]


def _engine_group(run: RunRecord, engine: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """An engine header row (name, version or "not installed", tooltip) with its parser rows."""
    info = run.engines.get(engine) or EngineRun()
    if info.available:
        label, tip = info.version or "version unknown", ""
    else:
        label, tip = "not installed", info.skip_reason or ""
    return {"name": engine, "label": label, "tip": tip, "rows": rows}


class _Matrix:
    """Rows of matrix cells plus the detail records the page's script reads."""

    def __init__(self, results: dict[str, Any], columns: list[dict[str, Any]]) -> None:
        self.columns = columns
        self.details: list[dict[str, Any]] = []
        self.values = _Values()
        self.reruns = {engine: info.rerun for engine, info in results["run"].engines.items()
                       if info.rerun}  # each engine's rerun command, {parser} {case} {mode} left
        self.grouped: dict[tuple[str, str], list[CellRecord]] = {}
        for cell in results["cells"]:
            self.grouped.setdefault((cell.parser, cell.case), []).append(cell)

    def cell(self, parser: str, case: dict[str, Any]) -> dict[str, Any] | None:
        modes = sorted(self.grouped.get((parser, case["id"]), []), key=_mode_key)
        if not modes:
            return None
        token_tier = [mode.outcome for mode in modes if not in_char_tier(mode) and not on_responses(mode)]
        char_tier = [mode.outcome for mode in modes if in_char_tier(mode)]
        responses = [mode.outcome for mode in modes if on_responses(mode)]
        outcome = worst_outcome(token_tier or char_tier or responses)
        char_outcome = worst_outcome(char_tier) if char_tier and token_tier else None
        if char_outcome and worst_outcome([outcome, char_outcome]) == outcome:
            char_outcome = None  # the mark only shows a char tier worse than the token tier
        responses_outcome = worst_outcome(responses) if responses and token_tier else None
        if responses_outcome and worst_outcome([outcome, responses_outcome]) == outcome:
            responses_outcome = None  # likewise the Responses API's, worse than Chat Completions'
        self.details.append(
            {
                "parser": parser,
                "case": case["id"],
                "title": case["title"],
                "modes": [_mode_detail(mode, self.values, self.reruns.get(parser.split("/", 1)[0]))
                          for mode in modes],
            }
        )
        summary = ", ".join(f"{mode.mode} {SYMBOLS[mode.outcome]}" for mode in modes)
        return {
            "parser": parser,
            "case": case["id"],
            "index": len(self.details) - 1,
            "outcome": outcome,
            "symbol": SYMBOLS[outcome],
            # the char tier is shown apart: a small mark when it is worse than the token tier
            "char_outcome": char_outcome,
            "char_symbol": SYMBOLS[char_outcome] if char_outcome else "",
            "responses_outcome": responses_outcome,
            "responses_symbol": SYMBOLS[responses_outcome] if responses_outcome else "",
            "tip": f"{parser} · {case['id']}: {outcome} ({summary})",
        }

    def row(self, parser: dict[str, Any], scores: dict[str, Any]) -> dict[str, Any]:
        return {
            **parser,
            "name": parser["parser"].split("/", 1)[-1],
            "anchor": row_anchor(parser["parser"]),
            "cells": [self.cell(parser["parser"], case) for case in self.columns],
            "vocabulary": scores["vocabulary"],
            "score": format_score(scores["score"]),
            "char_score": format_score(scores["char_score"]),
            "responses_score": format_score(scores["responses_score"]),
            "incremental": format_incremental(scores["incremental"]),
            "incremental_bad": bool(scores["incremental"]["cells"]),
            "speed": format_slowdown(scores["slowest"]),
            "speed_tip": _speed_tip(scores["slowest"]),
            "slow": bool(scores["slowest"] and scores["slowest"].slowdown >= SLOW_FACTOR),
        }

    def script_data(self) -> Markup:
        return script_json(
            {
                "symbols": SYMBOLS,
                "values": self.values.table,
                "reruns": self.reruns,
                "cells": self.details,
            }
        )


def _speed_tip(cell: CellRecord | None) -> str:
    if cell is None:
        return "no measurable parse time against the reference parser"
    return (f"slowest: {cell.case} {cell.mode}, {cell.parse_cpu_s:.3f} s CPU vs "
            f"{cell.reference_cpu_s:.3f} s for the reference parser (slow from ×{SLOW_FACTOR:g}; not a verdict)")


def _run_lines(run: RunRecord) -> list[str]:
    """One line per merged engine run (engines and versions, start, duration, commit); none for a single run."""
    if run.runs is None:
        return []
    lines = []
    for one in run.each:
        engines = ", ".join(f"{name} {info.version or ''}".strip() for name, info in one.engines.items())
        commit = str(one.commit or "no commit")[:12]
        lines.append(f"{engines} · {one.started} · {format_duration(one.duration_s)} · {commit}")
    return lines


def _vocabulary_lines(results: dict[str, Any]) -> list[str]:
    """Which vocabulary each graded family was tokenized on, real ones first."""
    by_vocabulary: dict[str, set[str]] = {}
    for cell in results["cells"]:
        by_vocabulary.setdefault(cell_vocabulary(cell), set()).add(cell.family)
    return [f"{label}: {', '.join(sorted(families))}"
            for label, families in sorted(by_vocabulary.items(), key=lambda kv: (kv[0] == SYNTHETIC, kv[0]))]


def _context(results: dict[str, Any]) -> dict[str, Any]:
    run = results["run"]
    case_groups = _case_groups(results["cases"])
    columns = [case for _, cases in case_groups for case in cases]
    matrix = _Matrix(results, columns)
    scores = {row["parser"]: row for row in parser_scores(results)}
    engines: dict[str, list[dict[str, Any]]] = {}
    for parser in all_parsers(results):
        engines.setdefault(parser["engine"], []).append(matrix.row(parser, scores[parser["parser"]]))
    engine_rows = [_engine_group(run, engine, rows) for engine, rows in engines.items()]
    case_scores = [
        format_score(score(count_outcomes(
            c for c in results["cells"] if c.case == case["id"] and not in_char_tier(c) and not on_responses(c))))
        for case in columns
    ]
    totals = outcome_counts(results)
    return {
        "run": run,
        "duration": format_duration(run.duration_s),
        "runs": _run_lines(run),
        "totals": [(o, totals[o], SYMBOLS[o]) for o in OUTCOMES],
        "legend": [(o, SYMBOLS[o], MEANINGS[o]) for o in SEVERITY],
        "case_groups": case_groups,
        "columns": columns,
        "engines": engine_rows,
        "coverage": [share.line() for share in engine_shares(run)] + [entry.line() for entry in engine_coverage(run)],
        "known_broken": _known_broken(results),
        "vocabularies": _vocabulary_lines(results),
        "case_scores": case_scores,
        "cells_json": matrix.script_data(),
    }


def bug_anchor(engine: str, bug: str | None) -> str:
    """The HTML id of a bug's entry in the page's known-broken list (`bug-vllm/think-opener`), a URL fragment
    as it is (the engine and id percent-encoded as a parser row's are)."""
    return "bug-" + row_anchor(f"{engine}/{bug or 'none'}").removeprefix("parser-")


def _known_broken(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every engine's known-broken cells by bug: the bug's reason, link and repro command, and its cells as
    (parser, case) rows with their modes, each linked to its detail panel."""
    engines = []
    for engine in known_broken(results, top=len(results["cells"])):
        bugs = []
        for bug in engine.bugs:
            rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for cell in bug.cells:
                rows.setdefault((cell.parser, cell.case), []).append(cell)
            bugs.append({
                "anchor": bug_anchor(engine.engine, bug.id), "label": bug.label, "untriaged": bug.untriaged,
                "count": bug.count, "parsers": len(bug.parsers), "reason": bug.reason, "link": bug.link,
                "href": http_url(bug.link), "repro": repro_command(bug.example, results["run"]),
                "rows": [{"parser": parser, "case": case, "href": "#" + cell_fragment(cells[0].id),
                          "modes": ", ".join(c.mode for c in cells)} for (parser, case), cells in rows.items()],
            })
        engines.append({"engine": engine.engine, "cells": engine.cells, "bugs": bugs})
    return engines


def render_matrix(results: dict[str, Any]) -> str:
    """The matrix as one self-contained HTML document."""
    return _ENV.get_template("matrix.html.j2").render(**_context(results))


def write_matrix(results: dict[str, Any], path: str | Path) -> Path:
    """Render the matrix to `path` (parent directories created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_matrix(results), encoding="utf-8", errors="replace")
    return path
