"""Standalone reproductions: one Python file per cell that replays it against the engine, without us.

`python -m contract.cli.repro CELL [--out DIR]` (in the engine's environment; `nox -s repro -- CELL`
finds it) grades the cell again in-process, keeps the chunkings the parser saw, and writes
`DIR/<cell>.py` plus the tokenizer it needs as JSON beside it. The file holds the request, the model
text, the exact deltas and token ids, the engine calls our adapter makes (the adapter's own serving
code, inlined) and the matrix's checks (inlined too), and fails with an AssertionError naming the
broken check while the engine has the bug; it exits 0 once the engine is fixed.

`--verify RESULTS --known-broken N --passing M` writes repros for a spread sample of a results
file's known-broken and passing cells and runs each in a fresh interpreter (`python -I`, from the
output folder, so nothing of this project is importable): each must fail, resp. pass, as recorded.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import inspect
import json
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from contract import expectations
from contract.cases import expected, model
from contract.cases.catalog import case
from contract.cases.family import REAL, TIERS, Family, Sample, in_tier
from contract.cases.model import Chunk, Message
from contract.grading import assembly, checks, compare
from contract.grading.adapter import Engine, EngineRepro, ParserUnderTest, engine_module
from contract.grading.cell import Cell
from contract.grading.cell_id import EXAMPLE, parse_cell_id
from contract.grading.record import CellRecord
from contract.grading.subject import Subject, grade
from contract.run.plan import plan
from contract.run.provenance import installed_build
from contract.streams.chunking import mode
from contract.streams.profiles import CI, profile
from contract.streams.tokenizer import TokenStream, family_stream, vocabulary_label
from fixtures import all_families, expectations_dir
from reports.load import load_results

# The matrix's message types and checks, in the order the repro defines them.
CHECKS_SOURCE: tuple[object, ...] = (
    model.ToolCall, model.Message, model.ToolCallDelta, model.Delta, model.Chunk,
    expected._AnyArguments, "ANY_ARGUMENTS = ANY = _AnyArguments()", expected.RawArguments, expected.ExpectedCall,
    expected.ExpectedMessage, expected.Expected,
    f"_WHITESPACE = {compare._WHITESPACE!r}", compare.json_equal, compare.squeeze, compare.Verdict, compare.same_words,
    compare._text,
    compare._clip, compare.arguments_match, compare._call, compare._ids, compare.matches, compare.normalized,
    assembly.delta_dict, assembly._appends, assembly._flush, assembly.assemble,
    checks.Failure, checks.StreamRun, checks.expected, checks.finish_reason, checks.markers_leaked, checks._fragment,
    checks.fragments, checks.stream_equals_batch, checks.delta_protocol, checks.duplication, checks._leaves,
    checks._haystack, checks._squeezed, checks.conservation, checks._kept, checks.judge_message, checks.judge_stream,
    f"INCREMENTAL_BOUND = {checks.INCREMENTAL_BOUND!r}", f"INCREMENTAL_MODES = {checks.INCREMENTAL_MODES!r}",
    checks._emitted, checks._nonspace, f"AMBIGUITY_REACH = {checks.AMBIGUITY_REACH!r}", checks._marker_prefixes, checks._ambiguity, checks._ambiguous,
    checks._counted_before, checks.withheld, checks.incremental,
)
CHECKS_IMPORTS = (
    "import contextlib", "import functools", "import json", "import re", "from collections.abc import Iterable, Sequence",
    "from dataclasses import dataclass", "from typing import Any",
    "from openai.lib.streaming._deltas import accumulate_delta  # the OpenAI SDK's own delta accumulation",
)


def find_cell(text: str, mode: str | None = None, tier: str = REAL) -> Cell:
    """The cell a cell id names, or a rerun's node id with its `--mode` (`contract.grading.cell_id`)."""
    try:
        wanted = parse_cell_id(text, mode)
    except ValueError as exc:
        raise SystemExit(f"repro: {exc}") from None
    try:
        cells = plan([wanted.engine], registry=in_tier(all_families(), tier))
    except ValueError as exc:
        raise SystemExit(f"repro: {str(wanted)!r}: no engine {wanted.engine!r} ({exc})") from None
    for cell in cells:
        if cell.id == str(wanted):
            return cell
    known = {"parser": {c.parser for c in cells}, "case": {c.case for c in cells}, "mode": {c.mode for c in cells}}
    unknown = [f"{part} {getattr(wanted, part)!r}" for part in known if getattr(wanted, part) not in known[part]]
    raise SystemExit(f"repro: no cell {str(wanted)!r}: engine {wanted.engine!r} grades no "
                     f"{' and no '.join(unknown) or 'such cell'} (e.g. {EXAMPLE})")


class RecordingSubject(Subject):
    """A subject that keeps every chunking it was run on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[Chunk, ...]] = []

    def run(self, chunks: tuple[Chunk, ...]) -> checks.StreamRun:
        self.seen.append(chunks)
        return super().run(chunks)


@dataclass(frozen=True)
class Replayed:
    cell: Cell
    family: Family  # in the vocabulary tier the cell is graded in
    engine: Engine
    parser: ParserUnderTest
    sample: Sample
    stream: TokenStream
    status: str
    failures: tuple[checks.Failure, ...]
    observed: Message | None
    chunkings: tuple[tuple[Chunk, ...], ...]


def replay(cell: Cell, hypothesis_profile: str = CI, tier: str = REAL) -> Replayed:
    """Grade the cell in this process, as the matrix does (in vocabulary tier `tier`), keeping the chunkings
    that decide it."""
    if mode(cell.mode).isolation:
        raise SystemExit(f"repro: {cell.id}: the {cell.mode} mode interleaves two requests, which no standalone repro "
                         "carries yet; its rerun command grades the cell again")
    module = engine_module(cell.engine)
    engine = module.load()
    if isinstance(engine, str):
        raise SystemExit(f"repro: {engine}")
    family = all_families()[cell.family or ""].in_tier(tier)
    sample = family.sample(case(cell.case))
    if not isinstance(sample, Sample):
        raise SystemExit(f"repro: {cell.id} is not graded ({type(sample).__name__}): nothing to reproduce")
    if cell.parser_name in engine.reasoning_in_content and family.reasoning:
        sample = sample.with_reasoning_in_content(family.reasoning)
    parser = engine.factories[cell.parser_name](family)
    stream = family_stream(family, sample.rendered)
    subject = RecordingSubject(parser, family, sample, stream)
    graded = grade(subject, mode(cell.mode), profile(hypothesis_profile),
                   incremental=not engine.holdback_unmeasurable)
    if graded.status == "pass":
        chunkings = tuple(dict.fromkeys(subject.seen))
    else:
        failing = [c for c in subject.seen if tuple(x.text for x in c) == graded.chunking]
        chunkings = (failing[-1],) if failing else ()
    return Replayed(cell, family, engine, parser, sample, stream, graded.status, graded.failures, graded.observed, chunkings)


def _without_project_imports(module: ModuleType) -> str:
    """A module's source minus its docstring, `from __future__` and imports of this project."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    lines = source.splitlines()
    drop: set[int] = set()
    for node in tree.body:
        project = isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in (
            "contract", "parsers", "fixtures", "__future__"))
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is tree.body[0]
        if project or docstring:
            drop.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    kept = "\n".join(line for n, line in enumerate(lines) if n not in drop).strip("\n")
    return re.sub(r"\n{3,}", "\n\n\n", kept)


def _checks_source() -> str:
    parts = [item if isinstance(item, str) else inspect.getsource(item) for item in CHECKS_SOURCE]
    return "\n\n".join(textwrap.dedent(p).strip("\n") for p in parts)


def _comment(text: str, width: int = 110) -> str:
    """Text as `#` comment lines, control characters spelled out."""
    lines = []
    for raw in text.splitlines() or [""]:
        raw = re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]",
                     lambda m: f"\\u{ord(m.group()):04x}", raw)
        lines += textwrap.wrap(raw, width - 2, replace_whitespace=False, drop_whitespace=False) or [""]
    return "\n".join(f"# {line}".rstrip() for line in lines)


def _message_text(message: Message | None) -> str:
    return "(none: the parser raised)" if message is None else json.dumps(message.to_json(), ensure_ascii=False)


MAIN = '''
def main() -> None:
    wanted = expected_result()
    if MODE == "batch":
        observed = run_batch()
        failures, notes, _ = judge_message(wanted, MARKERS, PIECES, observed)
    else:
        try:
            batch = run_batch()
        except Exception as exc:  # the matrix then skips stream-equals-batch
            print(f"batch parsing raised {type(exc).__name__}: {exc}")
            batch = None
        worst, at = 0, -1
        for steps, final_ids in CHUNKINGS:
            chunks = tuple(Chunk(text, tuple(ids)) for text, ids in steps)
            per_chunk, final = run_stream(chunks, final_ids)
            run = StreamRun(chunks, tuple(tuple(d) for d in per_chunk), tuple(final))
            failures, notes, observed = judge_stream(wanted, MARKERS, PIECES, run, batch, keep_ids=KEEP_IDS)
            if INCREMENTAL:
                worst, at = max((worst, at), withheld(TEXT, PAYLOAD, MARKERS, run))
            if failures:
                break
        failures += incremental(MODE, worst, at, BOUND) if INCREMENTAL else []
    print("observed:", json.dumps(observed.to_json(), ensure_ascii=False))
    for note in notes:
        print("note:", note)
    if failures:
        raise AssertionError("\\n".join(f"{f.check}: {f.detail}" for f in failures))
    print(f"OK: {CELL} behaves as expected")
'''


def script(replayed: Replayed, parts: EngineRepro, tokenizer_file: str) -> str:
    """The repro's source."""
    cell, sample = replayed.cell, replayed.sample
    preferred = sample.expected.preferred
    build = installed_build(replayed.engine.distribution).to_json() if replayed.engine.distribution else {}
    verdict = "passes" if replayed.status == "pass" else f"{replayed.status}s"
    known = expectations.load(expectations_dir(replayed.family.tier) / f"{replayed.engine.name}.toml").lookup(
        cell.parser, cell.case, cell.mode)
    for bug in known:
        verdict += f"\n(known broken, bug {bug.id}: {bug.reason}" + (f"; {bug.link}" if bug.link else "") + ")"
    failures = "\n".join(f"  {f.check}: {f.detail}" for f in replayed.failures) or "  (none)"
    header = _comment(
        f"Standalone reproduction of conformance-matrix cell {cell.id}\n"
        f"engine: {parts.requirement}"
        + (f" (graded build: {build.get('source')} {build.get('url') or ''} {build.get('commit') or ''})".rstrip()
           if build.get("source") not in (None, "index") else "") + "\n"
        f"case {cell.case}: {case(cell.case).title}\n"
        f"vocabulary: {vocabulary_label(replayed.family)} (its tokenizer is {tokenizer_file})\n"
        f"mode {cell.mode}: " + ("one-shot parsing of the whole output" if cell.mode == "batch" else
                                 f"streaming, {len(replayed.chunkings)} chunking(s) below, one engine step per chunk")
        + "\n\n"
        f"expected ({preferred.label}): {json.dumps(preferred.to_json(), ensure_ascii=False)}\n"
        f"observed in the matrix: {_message_text(replayed.observed)}\n"
        f"the matrix's verdict: {verdict}\n{failures}\n\n"
        f"Run: python {file_stem(cell)}.py  (with {tokenizer_file} beside it, "
        f"in an environment with {parts.requirement}). It raises AssertionError naming the failing check while "
        "the engine behaves as observed, and prints OK once it behaves as expected."
    )
    ids_of = parts.chunk_ids or (lambda chunks: ([list(c.token_ids or ()) for c in chunks], []))
    chunkings = []
    for chunks in replayed.chunkings:
        per_chunk, final = ids_of(chunks)
        chunkings.append(([(c.text, ids) for c, ids in zip(chunks, per_chunk, strict=True)], final))
    data = "\n".join([
        f"CELL = {cell.id!r}",
        f"MODE = {cell.mode!r}",
        f"TEXT = {sample.text!r}  # the model's output",
        f"TOKEN_IDS = {list(replayed.stream.ids)!r}",
        f"STOP = {sample.stop!r}  # how generation ended: a stop token, or max_tokens ('length')",
        f"KEEP_IDS = {sample.case.native_ids!r}  # are tool-call ids part of the expected result",
        f"MARKERS = {_markers(replayed)!r}  # format markers that must not reach content",
        f"PIECES = {checks.conserved_pieces(sample)!r}  # narration, reasoning and argument text that must survive",
        f"PAYLOAD = {checks.payload_spans(sample)!r}  # where TEXT holds payload, for the incremental check",
        f"INCREMENTAL = {not replayed.engine.holdback_unmeasurable!r}  # can deltas be attributed to chunks",
        f"BOUND = {checks.INCREMENTAL_BOUND + replayed.family.held_by_rule(sample.case)!r}  # payload it may hold",
        _chunkings_source(chunkings),
        "",
        "",
        "def expected_result() -> Expected:",
        "    \"\"\"The acceptable outcomes, preferred first.\"\"\"",
        f"    return {sample.expected!r}",
    ])
    body = [
        header,
        '"""Reproduces one cell of the parser conformance matrix; see the comment above."""',
        "from __future__ import annotations",
        "\n".join(["import sys", "from pathlib import Path", *CHECKS_IMPORTS, *parts.imports]),
        "HERE = Path(__file__).resolve().parent",
        data,
        "# ---- the engine, driven the way its server drives it ----",
        parts.code.strip("\n"),
        MAIN.strip("\n"),
        *(f"# ---- {m.__name__.replace('.', '/')}.py of the conformance matrix, inlined ----\n"
          + _without_project_imports(m) for m in parts.sources),
        "# ---- the conformance matrix's message types and checks, inlined (contract/) ----\n" + _checks_source(),
        'if __name__ == "__main__":\n    main()',
    ]
    return "\n\n\n".join(body) + "\n"


def _chunkings_source(chunkings: list[tuple[list[tuple[str, list[int]]], list[int]]]) -> str:
    """CHUNKINGS, one engine step per line."""
    lines = ["# per chunking: its engine steps (delta text, the token ids the engine receives with it), then the",
             "# ids the engine receives only with the finish (held back until they decode)", "CHUNKINGS = ["]
    for number, (steps, final) in enumerate(chunkings, 1):
        lines += [f"    (  # chunking {number} of {len(chunkings)}: {len(steps)} steps", "        ["]
        lines += [f"            ({text!r}, {ids!r})," for text, ids in steps]
        lines += ["        ],", f"        {final!r},", "    ),"]
    return "\n".join([*lines, "]"])


def _markers(replayed: Replayed) -> tuple[str, ...]:
    family = all_families()[replayed.cell.family or ""]
    return tuple(family.markers)


def adapter_repro(replayed: Replayed) -> EngineRepro:
    """The engine's contribution, from `parsers/<engine>/repro.py` (`engine_repro(parser, sample)`)."""
    package = engine_module(replayed.cell.engine).module.__name__
    try:
        module = importlib.import_module(f"{package}.repro")
    except ImportError as exc:
        raise SystemExit(f"repro: engine {replayed.engine.name!r} has no standalone repro ({exc})") from None
    return module.engine_repro(replayed.parser, replayed.sample, replayed.stream.ids, tokenizer_file(replayed.family))


def file_stem(cell: Cell) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", cell.id.replace("/", "__").replace(":", "__"))


def tokenizer_file(family: Family) -> str:
    """Named by family and tier: repros of one family's cells share the file (a real vocabulary is large)."""
    return f"{family.name}.{family.tier}.tokenizer.json"


def write_repro(cell: Cell, out: Path, hypothesis_profile: str = CI, tier: str = REAL) -> tuple[Path, Replayed]:
    replayed = replay(cell, hypothesis_profile, tier)
    parts = adapter_repro(replayed)
    out.mkdir(parents=True, exist_ok=True)
    for name, content in parts.files.items():  # shared by the repros of a family, maybe running: replaced whole
        partial = out / f".{name}.part"
        partial.write_text(content, encoding="utf-8")
        partial.replace(out / name)
    path = out / f"{file_stem(cell)}.py"
    path.write_text(script(replayed, parts, tokenizer_file(replayed.family)), encoding="utf-8")
    return path, replayed


# ---- verification on a sample of a results file ----

def _spread(cells: list[CellRecord], count: int) -> list[CellRecord]:
    """`count` cells spread over modes and parsers, in a stable order."""
    by_mode: dict[str, list[CellRecord]] = {}
    for c in sorted(cells, key=lambda c: hashlib.sha256(c.id.encode()).digest()):
        by_mode.setdefault(c.mode, []).append(c)
    picked: list[CellRecord] = []
    seen_parsers: set[str] = set()
    while len(picked) < count and any(by_mode.values()):
        for group in by_mode.values():
            if group and len(picked) < count:
                fresh = next((c for c in group if c.parser not in seen_parsers), group[0])
                group.remove(fresh)
                picked.append(fresh)
                seen_parsers.add(fresh.parser)
    return picked


def verify(results: Path, known_broken: int, passing: int, out: Path) -> int:
    """Repros of a sample must fail (known-broken cells) or pass (passing cells) as recorded; 1 if any does not."""
    document = load_results(results)
    cells = [c for c in document["cells"] if not mode(c.mode).isolation]  # no standalone repro yet
    tier = document["run"].vocabulary
    sample = ([("xfail", c) for c in _spread([c for c in cells if c.outcome == "xfail"], known_broken)]
              + [("pass", c) for c in _spread([c for c in cells if c.outcome == "pass"], passing)])
    wrong = 0
    with ThreadPoolExecutor(max_workers=2) as runner:  # a repro imports its engine afresh: run two at once
        runs = []
        for recorded, record in sample:
            cell_text = record.id
            path, _ = write_repro(find_cell(cell_text, tier=tier), out, tier=tier)
            runs.append((recorded, record, cell_text, runner.submit(
                subprocess.run, [sys.executable, "-I", path.name], cwd=out, capture_output=True, text=True,
                timeout=1200)))
    for recorded, record, cell_text, run in runs:
        done = run.result()
        failed_as_recorded = done.returncode != 0 and _raised(done.stderr, record)
        ok = done.returncode == 0 if recorded == "pass" else failed_as_recorded
        wrong += not ok
        shown = done.stderr if done.returncode else done.stdout
        last = (shown.strip().splitlines() or [""])[-1]
        print(f"{'ok   ' if ok else 'WRONG'} {recorded:5} exit {done.returncode}  {cell_text}  {last[:120]}")
        if not ok:
            print(textwrap.indent((done.stdout + done.stderr)[-3000:], "    "))
    print(f"{len(sample) - wrong} of {len(sample)} repros behave as their cells were recorded ({out})")
    return 1 if wrong else 0


def _raised(stderr: str, record: CellRecord) -> bool:
    """The repro failed the way the cell failed: an assertion naming the cell's first failed check, or,
    for a parser that raised, an exception other than an assertion."""
    checks_failed = {f.check for f in record.failures}
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if checks_failed == {"error"}:
        return bool(last) and not last.startswith("AssertionError")
    raised = stderr[stderr.find("AssertionError: "):] if "AssertionError: " in stderr else ""
    return any(re.search(rf"(AssertionError: |\n){re.escape(check)}: ", raised) for check in checks_failed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.cli.repro", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cell", nargs="?", help="cell id (engine/parser:case:mode) or the rerun node id")
    parser.add_argument("--mode", help="the cell's mode, with a node id (as the rerun command gives it)")
    parser.add_argument("--out", type=Path, default=Path("reports/out/repro"), help="folder to write into")
    parser.add_argument("--hypothesis-profile", default=CI, help="as the cell was graded (random/chars cells)")
    parser.add_argument("--vocabulary", choices=TIERS, default=REAL, help="the tier the cell was graded in")
    parser.add_argument("--verify", type=Path, metavar="RESULTS", help="check repros of a sample of this results file")
    parser.add_argument("--known-broken", type=int, default=10)
    parser.add_argument("--passing", type=int, default=5)
    args = parser.parse_args(argv)
    if args.verify:
        return verify(args.verify, args.known_broken, args.passing, args.out)
    if not args.cell:
        parser.error("give a CELL or --verify RESULTS")
    path, replayed = write_repro(find_cell(args.cell, args.mode, args.vocabulary), args.out, args.hypothesis_profile,
                                 args.vocabulary)
    print(f"{path}: reproduces {replayed.cell.id} ({replayed.status} in the matrix now); "
          f"run it with: python {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
