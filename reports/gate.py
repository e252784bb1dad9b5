"""The regression gate: which cells a candidate build breaks or fixes, compared with a baseline run.

`python -m reports.gate BASELINE CANDIDATE [--markdown PATH] [--json PATH]`, each side a results file
or a folder of them (`reports/out/sglang`, `reports/out`, `reports/out/candidates/sglang`). Cells are
matched by (parser, case, mode) and compared by outcome and failure signature, never by timing. Exit 1
on any regression (a passing cell that no longer passes, or a failing cell that fails differently),
0 otherwise, 2 on unreadable input. The markdown is also appended to $GITHUB_STEP_SUMMARY when set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from contract.grading.outcome import FAILING, PASSING
from contract.grading.record import CellRecord
from contract.run.record import RunRecord
from reports.merge import load_merged
from reports.summary import cell_vocabulary
from reports.text import inert_markdown, inert_terminal

# Transition kinds, most urgent first; the first two fail the gate.
KINDS = ("regression", "changed", "improvement", "new", "removed")
FAILS_GATE = frozenset({"regression", "changed"})
TITLES = {
    "regression": "Regressions (passed, now does not)",
    "changed": "Changed failures (failed, now fails differently)",
    "improvement": "Improvements (failed, now passes)",
    "new": "New cells",
    "removed": "Removed cells",
}
COUNTED = {"regression": "regressed", "changed": "fail differently", "improvement": "improved", "new": "new",
           "removed": "removed"}
MAX_ROWS = 50
DETAIL_CHARS = 120

Key = tuple[str, str, str]


@dataclass(frozen=True)
class Transition:
    kind: str
    parser: str
    case: str
    mode: str
    before: str  # outcome, or "absent"
    after: str
    detail: str  # why the cell now fails (or why it failed before, for an improvement)
    reason: str | None  # the KnownBroken reason on the cell, if any
    rerun: str | None  # how to grade the candidate's cell again


@dataclass(frozen=True)
class CoverageChange:
    engine: str
    kind: str  # tool | reasoning
    name: str
    change: str  # added | removed


@dataclass(frozen=True)
class Gate:
    baseline: RunRecord
    candidate: RunRecord
    compared: int
    transitions: tuple[Transition, ...]
    coverage: tuple[CoverageChange, ...]
    cautions: tuple[str, ...] = ()  # differences in how the two sides were graded

    def count(self, kind: str) -> int:
        return sum(1 for t in self.transitions if t.kind == kind)

    @property
    def regressed(self) -> bool:
        return any(t.kind in FAILS_GATE for t in self.transitions)

    def to_json(self) -> dict[str, Any]:
        return {
            "regressed": self.regressed,
            "compared": self.compared,
            "counts": {kind: self.count(kind) for kind in KINDS},
            "baseline": _builds(self.baseline),
            "candidate": _builds(self.candidate),
            "transitions": [asdict(t) for t in self.transitions],
            "coverage": [asdict(c) for c in self.coverage],
            "cautions": list(self.cautions),
        }


def _key(cell: CellRecord) -> Key:
    return cell.parser, cell.case, cell.mode


def _detail(cell: CellRecord | None) -> str:
    if not cell:
        return ""
    if cell.failures:
        return f"{cell.failures[0].check}: {cell.failures[0].detail}"
    return str(cell.error or cell.reason or "")


def classify(before: CellRecord | None, after: CellRecord | None) -> str | None:
    """The transition kind of one cell, or None when nothing a reviewer needs changed."""
    if before is None:
        return "new"
    if after is None:
        return "removed"
    a, b = before.outcome, after.outcome
    if a in PASSING:
        return None if b in PASSING else "regression"
    if a in FAILING:
        if b in PASSING:
            return "improvement"
        if b in FAILING:  # xfail, fail or changed only say how a failure compares with the expectation files
            return None if before.signature == after.signature else "changed"
        return "regression"  # was graded, now skipped or unimplemented: coverage lost
    return None if a == b else "new"  # n/a, skip, unimplemented before: nothing was graded to lose


def transitions(before: Iterable[CellRecord], after: Iterable[CellRecord]) -> list[Transition]:
    old = {_key(c): c for c in before}
    new = {_key(c): c for c in after}
    found = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        kind = classify(a, b)
        if kind is None:
            continue
        shown = a if kind in ("improvement", "removed") else b
        found.append(Transition(
            kind, *key, str(a.outcome) if a else "absent", str(b.outcome) if b else "absent", _detail(shown),
            shown.reason if shown else None, b.rerun if b else None,
        ))
    return sorted(found, key=lambda t: KINDS.index(t.kind))


def _registered(run: RunRecord) -> set[tuple[str, str, str]]:
    return {(engine, row.kind, row.name) for engine, info in run.engines.items() for row in info.coverage}


def coverage_changes(before: RunRecord, after: RunRecord) -> list[CoverageChange]:
    """Registry names added or removed, for engines whose registry both runs report."""
    both = {e for e, info in before.engines.items() if info.coverage} & {
        e for e, info in after.engines.items() if info.coverage}
    old = {r for r in _registered(before) if r[0] in both}
    new = {r for r in _registered(after) if r[0] in both}
    return [CoverageChange(*r, "removed") for r in sorted(old - new)] + [
        CoverageChange(*r, "added") for r in sorted(new - old)]


def cautions(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """How the two sides were graded differently, which can move cells on its own."""
    found = []
    profiles = [{r.hypothesis_profile for r in d["run"].each} for d in (baseline, candidate)]
    if profiles[0] != profiles[1]:
        found.append(f"hypothesis profiles differ ({', '.join(sorted(map(str, profiles[0])))} vs "
                     f"{', '.join(sorted(map(str, profiles[1])))}): random and chars cells saw different chunkings")
    if [c["id"] for c in baseline["cases"]] != [c["id"] for c in candidate["cases"]]:
        found.append("the case catalogs differ: grade both sides at the same commit of the matrix")
    vocabulary = [{c.family: cell_vocabulary(c) for c in d["cells"]} for d in (baseline, candidate)]
    moved = sorted(f for f in vocabulary[0].keys() & vocabulary[1].keys() if vocabulary[0][f] != vocabulary[1][f])
    if moved:
        found.append(f"{len(moved)} families were tokenized on different vocabularies ({', '.join(moved)}; e.g. "
                     f"{vocabulary[0][moved[0]]} vs {vocabulary[1][moved[0]]}): their streamed deltas differ")
    return found


def compare(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> Gate:
    """The gate of two (merged) results documents."""
    both = {_key(c) for c in baseline["cells"]} & {_key(c) for c in candidate["cells"]}
    return Gate(baseline["run"], candidate["run"], len(both),
                tuple(transitions(baseline["cells"], candidate["cells"])),
                tuple(coverage_changes(baseline["run"], candidate["run"])), tuple(cautions(baseline, candidate)))


def results_paths(path: Path) -> list[Path]:
    """A results file, or the results files a folder holds (its own, else one per engine folder)."""
    if path.is_dir():
        own = path / "results.json"
        found = [own] if own.exists() else sorted(path.glob("*/results.json"))
        if not found:
            raise ValueError(f"{path}: no results.json in it or in its engine folders")
        return found
    return [path]


def _builds(run: RunRecord) -> dict[str, Any]:
    """Per engine: what was graded (version and build), where and when, as the gate's JSON tells it."""
    out = {}
    for one in run.each:
        for engine, info in one.engines.items():
            out[engine] = {"version": info.version, "build": dict(info.build) if info.build is not None else None,
                           "started": one.started, "commit": one.commit}
    return out


def build_label(engine: str, info: Mapping[str, Any]) -> str:
    """`sglang 0.5.23`, with the build's origin and commit when it is not a release from the index."""
    build = info.get("build") or {}
    text = f"{engine} {info.get('version') or 'not installed'}"
    if build.get("source") and build["source"] != "index":
        where = " ".join(str(p) for p in (build["source"], build.get("url")) if p)
        if build.get("commit"):
            where += f" @ {build['commit'][:12]}" + (", dirty" if build.get("dirty") else "")
        text += f" ({where})"
    return text


def _sides(gate: Gate) -> list[tuple[str, str]]:
    rows = []
    for side, run in (("baseline", gate.baseline), ("candidate", gate.candidate)):
        for engine, info in _builds(run).items():
            rows.append((side, build_label(engine, info)))
    return rows


def _verdict(gate: Gate) -> str:
    counts = ", ".join(f"{gate.count(k)} {COUNTED[k]}" for k in KINDS if gate.count(k))
    head = "FAIL: the candidate regresses" if gate.regressed else "PASS: no regressions"
    return f"{head} ({gate.compared} cells compared{'; ' + counts if counts else ''})"


def _grouped(items: Iterable[Transition]) -> list[tuple[Transition, list[str]]]:
    """Transitions of one parser and case with the same before/after and detail, modes joined."""
    groups: dict[tuple[str, str, str, str, str], tuple[Transition, list[str]]] = {}
    for t in items:
        groups.setdefault((t.parser, t.case, t.before, t.after, t.detail), (t, []))[1].append(t.mode)
    return list(groups.values())


def terminal_report(gate: Gate) -> str:
    lines = [_verdict(gate), *(f"{side}: {inert_terminal(label)}" for side, label in _sides(gate))]
    lines += [f"caution: {c}" for c in gate.cautions]
    for kind in KINDS:
        groups = _grouped(t for t in gate.transitions if t.kind == kind)
        if not groups:
            continue
        rows = [[inert_terminal(t.parser), inert_terminal(t.case), ",".join(modes), f"{t.before} -> {t.after}",
                 inert_terminal(t.detail, DETAIL_CHARS)] for t, modes in groups[:MAX_ROWS]]
        table = tabulate(rows, headers=["parser", "case", "modes", "outcome", "detail"], disable_numparse=True)
        more = f"\n… and {len(groups) - MAX_ROWS} more (see the JSON)" if len(groups) > MAX_ROWS else ""
        lines.append(f"\n{TITLES[kind]}: {sum(len(m) for _, m in groups)} cells\n{table}{more}")
    if gate.coverage:
        lines.append("\nCoverage of engine registries:")
        lines += [f"  {c.change} {c.kind} parser {inert_terminal(c.name)} ({c.engine})" for c in gate.coverage]
    return "\n".join(lines) + "\n"


def markdown_report(gate: Gate) -> str:
    """A pull-request comment: the verdict, what was compared, then each kind of transition."""
    mark = "❌" if gate.regressed else "✅"
    parts = [f"## {mark} Parser conformance gate", _verdict(gate)]
    parts.append(tabulate([[side, inert_markdown(label)] for side, label in _sides(gate)],
                          headers=["", "engine build"], tablefmt="github"))
    parts += [f"> **Caution:** {c}" for c in gate.cautions]
    for kind in KINDS:
        groups = _grouped(t for t in gate.transitions if t.kind == kind)
        if not groups:
            continue
        rows = [[inert_markdown(t.parser), inert_markdown(t.case), inert_markdown(", ".join(modes)),
                 f"{t.before} → {t.after}", inert_markdown(t.detail, DETAIL_CHARS)] for t, modes in groups[:MAX_ROWS]]
        table = tabulate(rows, headers=["parser", "case", "modes", "outcome", "detail"], tablefmt="github",
                         disable_numparse=True)
        more = f"\n\n… and {len(groups) - MAX_ROWS} more groups in the gate's JSON" if len(groups) > MAX_ROWS else ""
        body = f"### {TITLES[kind]}: {sum(len(m) for _, m in groups)} cells\n\n{table}{more}"
        if kind in FAILS_GATE and groups[0][0].rerun:
            body += f"\n\nRegrade one, e.g. {inert_markdown(groups[0][0].rerun, table=False)}"
        parts.append(body)
    if gate.coverage:
        rows = [[c.engine, c.kind, inert_markdown(c.name), c.change] for c in gate.coverage]
        parts.append("### Coverage of engine registries\n\n" + tabulate(
            rows, headers=["engine", "kind", "registered name", "change"], tablefmt="github"))
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports.gate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path, help="results file or folder of the baseline (the pinned release)")
    parser.add_argument("candidate", type=Path, help="results file or folder of the candidate build")
    parser.add_argument("--markdown", type=Path, help="write the pull-request markdown here")
    parser.add_argument("--json", type=Path, help="write every transition as JSON here")
    args = parser.parse_args(argv)
    try:
        baseline = load_merged(results_paths(args.baseline))
        candidate = load_merged(results_paths(args.candidate))
    except ValueError as exc:
        print(f"gate: {exc}", file=sys.stderr)
        return 2
    gate = compare(baseline, candidate)
    print(terminal_report(gate), end="")
    markdown = markdown_report(gate)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown, encoding="utf-8")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(gate.to_json(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as file:
            file.write(markdown)
    return 1 if gate.regressed else 0


if __name__ == "__main__":
    sys.exit(main())
