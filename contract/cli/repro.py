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
import dataclasses
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
from contract.cases.forced import UnwritableText
from contract.cases.model import Chunk, Message
from contract.grading import assembly, checks, compare, responses
from contract.grading.adapter import Engine, EngineRepro, ParserUnderTest, engine_module
from contract.grading.cell import Cell
from contract.grading.cell_id import EXAMPLE, parse_cell_id
from contract.grading.concurrency import grade_concurrent, token_by_token
from contract.grading.grader import as_graded, as_written, partner_case
from contract.grading.record import CellRecord
from contract.grading.responses import ResponsesView, serves_responses
from contract.grading.subject import Subject, grade
from contract.run.plan import plan
from contract.run.provenance import installed_build
from contract.streams.chunking import mode
from contract.streams.interleave import schedule
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
    compare._clip, compare.arguments_match, compare._call, compare._ids, compare.matches,
    f"_MINTED_ID = re.compile({compare._MINTED_ID.pattern!r})", f"MINTED = {compare.MINTED!r}", compare.normalized,
    assembly.delta_dict, assembly._appends, assembly._flush, assembly.assemble,
    checks.Failure, checks.StreamRun, checks.expected, checks.finish_reason, checks.markers_leaked, checks._fragment,
    checks.surfaced, checks._unblank,
    checks.fragments, checks.stream_equals_batch, checks.delta_protocol, checks.duplication, checks._leaves,
    checks._haystack, checks._squeezed, checks.conservation, checks._kept, checks.judge_message, checks.judge_stream,
    f"INCREMENTAL_BOUND = {checks.INCREMENTAL_BOUND!r}", f"INCREMENTAL_MODES = {checks.INCREMENTAL_MODES!r}",
    checks._emitted, checks._nonspace, f"AMBIGUITY_REACH = {checks.AMBIGUITY_REACH!r}", checks._marker_prefixes, checks._ambiguity, checks._ambiguous,
    checks._counted_before, checks.withheld, checks.incremental,
)
CHECKS_IMPORTS = (
    "import contextlib", "import dataclasses", "import functools", "import json", "import re",
    "from collections.abc import Iterable, Sequence", "from dataclasses import dataclass", "from typing import Any",
    "from openai.lib.streaming._deltas import accumulate_delta  # the OpenAI SDK's own delta accumulation",
)
# and, for a cell of the Responses API, how the matrix reads its items and events (contract/grading/responses.py)
RESPONSES_SOURCE: tuple[object, ...] = (
    f"TERMINAL = {responses.TERMINAL!r}", f"REASONING_DELTAS = {responses.REASONING_DELTAS!r}",
    f"READ_BY_CLIENT = {responses.READ_BY_CLIENT!r}", f"TARGETS = {responses.TARGETS!r}",
    responses._event_classes, "EVENT_CLASSES = _event_classes()", responses._item_text, responses.layout,
    responses._calls_faults, responses.message_of, responses.EventReader, responses._difference,
)
RESPONSES_IMPORTS = (
    "import typing", "from collections.abc import Mapping", "from dataclasses import field", "from openai import omit",
    "from openai._models import construct_type", "from openai.types.responses import ResponseStreamEvent",
    "from openai.lib.streaming.responses._responses import ResponseStreamState  # the SDK's own stream state",
)
# a Responses cell's entry points, over the adapter's `respond_batch()` and `respond_stream(chunks, final_ids)`
RESPONSES_ENTRY = '''
def run_batch() -> Message:
    """The one-shot response, read as its output items."""
    return message_of(respond_batch())


class _Events:
    """The stream's events, one list per engine step and the finish's, handed out as a session would."""

    def __init__(self, per_chunk: list[list[dict]], final: list[dict]) -> None:
        self.per_chunk, self.final = list(per_chunk), final

    def feed(self, chunk: Chunk) -> list[dict]:
        return self.per_chunk.pop(0)

    def finish(self, stop: str) -> list[dict]:
        return self.final


def run_stream(chunks: Sequence[Chunk], final_ids: list[int]) -> tuple[list[list[Delta]], list[Delta]]:
    """The streamed response's events, read as a client reads them, as chat deltas per engine step."""
    reader = EventReader(_Events(*respond_stream(chunks, final_ids)))
    per_chunk = [list(reader.feed(chunk)) for chunk in chunks]
    return per_chunk, list(reader.finish(STOP))
'''


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
class Partner:
    """The concurrent mode's second request: its sample, token stream and chunking (one token per step)."""

    sample: Sample
    stream: TokenStream
    chunks: tuple[Chunk, ...]


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
    partner: Partner | None = None  # the concurrent mode's other request


def replay(cell: Cell, hypothesis_profile: str = CI, tier: str = REAL) -> Replayed:
    """Grade the cell in this process, as the matrix does (in vocabulary tier `tier`), keeping the chunkings
    that decide it."""
    module = engine_module(cell.engine)
    engine = module.load()
    if isinstance(engine, str):
        raise SystemExit(f"repro: {engine}")
    families = in_tier(all_families(), tier)
    family = families[cell.family or ""]
    parser = engine.factories[cell.parser_name](family)
    sample = _graded_sample(engine, cell, family, cell.case)
    try:
        sample, _ = as_written(sample, "", parser)
    except UnwritableText as exc:
        raise SystemExit(f"repro: {cell.id}: no standalone repro, the text graded is not known: {exc}") from None
    except Exception:  # noqa: BLE001 - the server refused the forced request: the repro sends it and shows that
        pass
    stream = family_stream(family, sample.rendered)
    surface = mode(cell.mode).surface
    if surface == "responses" and not serves_responses(parser):
        raise SystemExit(f"repro: {cell.id}: {engine.name} serves {cell.parser_name} on Chat Completions only")
    subject = RecordingSubject(ResponsesView(parser) if surface == "responses" else parser, family, sample, stream)
    if mode(cell.mode).isolation:
        return _replay_concurrent(cell, engine, families, subject)
    graded = grade(subject, mode(cell.mode), profile(hypothesis_profile),
                   incremental=not engine.holdback_unmeasurable)
    if graded.status == "pass":
        chunkings = tuple(dict.fromkeys(subject.seen))
    else:
        failing = [c for c in subject.seen if tuple(x.text for x in c) == graded.chunking]
        chunkings = (failing[-1],) if failing else ()
    return Replayed(cell, family, engine, parser, sample, stream, graded.status, graded.failures, graded.observed, chunkings)


def _graded_sample(engine: Engine, cell: Cell, family: Family, case_id: str) -> Sample:
    """The family's sample of the case as the cell's parser is graded on it (append-think parsers keep the think
    block in content)."""
    sample = family.sample(case(case_id))
    if not isinstance(sample, Sample):
        raise SystemExit(f"repro: {cell.id}: {case_id} is not graded ({type(sample).__name__}): nothing to reproduce")
    return as_graded(sample, engine, dataclasses.replace(cell, case=case_id), family)[0]


def _replay_concurrent(cell: Cell, engine: Engine, families: dict[str, Family], subject: Subject) -> Replayed:
    """The concurrent cell graded again: the case's stream and its partner's, interleaved through one parser."""
    partner_id = partner_case(cell, families)
    if partner_id is None:
        raise SystemExit(f"repro: {cell.id}: {cell.parser} grades no other case to interleave this one with")
    family = subject.family
    partner_sample = _graded_sample(engine, cell, family, partner_id)
    partner = Subject(subject.parser, family, partner_sample, family_stream(family, partner_sample.rendered))
    graded = grade_concurrent(subject, partner, case(partner_id))
    return Replayed(cell, family, engine, subject.parser, subject.sample, subject.stream, graded.status,
                    graded.failures, graded.observed, (token_by_token(subject),),
                    Partner(partner_sample, partner.stream, token_by_token(partner)))


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


def _checks_source(items: tuple[object, ...] = CHECKS_SOURCE) -> str:
    parts = [item if isinstance(item, str) else inspect.getsource(item) for item in items]
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
    if not STREAMING:
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


CONCURRENT_MAIN = '''
class Turnstile:
    """Lets two threads take SCHEDULE's steps in its order. `chunks` hands a stream its chunks, each once its
    step's turn has come; a step is done when its thread asks for the next chunk, a finish when `run_stream`
    returns (at once, for an engine that replays the whole request at its finish: both then reach the server
    together). A stream that raised gives up its remaining steps."""

    def __init__(self) -> None:
        self.position = 0
        self.dead: set[int] = set()
        self.turn = threading.Condition()

    def _current(self) -> tuple[int, int | None] | None:
        while self.position < len(SCHEDULE) and SCHEDULE[self.position][0] in self.dead:
            self.position += 1
        return SCHEDULE[self.position] if self.position < len(SCHEDULE) else None

    def _wait(self, step: tuple[int, int | None]) -> None:
        with self.turn:
            if not self.turn.wait_for(lambda: self._current() == step, timeout=600):
                raise TimeoutError(f"step {step} never came: the schedule stands at {self._current()}")

    def done(self) -> None:
        with self.turn:
            self.position += 1
            self.turn.notify_all()

    def give_up(self, stream: int) -> None:
        with self.turn:
            self.dead.add(stream)
            self.turn.notify_all()

    def chunks(self, stream: int, chunks: Sequence[Chunk]) -> Iterable[Chunk]:
        for index, chunk in enumerate(chunks):
            self._wait((stream, index))
            yield chunk
            self.done()
        self._wait((stream, None))
        if REPLAYS_AT_FINISH:
            self.done()


def streamed(chunks: Iterable[Chunk], final_ids: list[int], request: dict) -> Message | BaseException:
    try:
        per_chunk, final = run_stream(chunks, final_ids, **request)
    except Exception as exc:  # an outcome, as in the matrix
        return exc
    return assemble([d for group in per_chunk for d in group] + list(final))


def interleaved(runs: list[tuple[tuple[Chunk, ...], list[int], dict]]) -> list[Message | BaseException]:
    """Both requests through the one server, in two threads that take turns as SCHEDULE orders their steps."""
    turnstile, results = Turnstile(), [None, None]

    def run(stream: int) -> None:
        chunks, final_ids, request = runs[stream]
        results[stream] = streamed(turnstile.chunks(stream, chunks), final_ids, request)
        if isinstance(results[stream], BaseException):
            turnstile.give_up(stream)
        elif not REPLAYS_AT_FINISH:
            turnstile.done()

    threads = [threading.Thread(target=run, args=(stream,)) for stream in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def shown(result: Message | BaseException, keep_ids: bool) -> Any:
    if isinstance(result, BaseException):
        return f"raised {type(result).__name__}: {result}"
    return normalized(result, keep_ids=keep_ids)


def main() -> None:
    """Each request alone (one token per step), then both interleaved through one server: each must come out
    as it did alone."""
    def steps(chunking: tuple[list[tuple[str, list[int]]], list[int]]) -> tuple[tuple[Chunk, ...], list[int]]:
        return tuple(Chunk(text, tuple(ids)) for text, ids in chunking[0]), chunking[1]

    runs = [(*steps(CHUNKINGS[0]), {}), (*steps(PARTNER_CHUNKING), PARTNER_REQUEST)]
    alone = [streamed(*run) for run in runs]
    together = interleaved(runs)
    print("observed:", json.dumps(shown(together[0], KEEP_IDS), ensure_ascii=False, default=str))
    failures = []
    for label, keep_ids, solo, both in (("this request", KEEP_IDS, alone[0], together[0]),
                                        (f"the partner request ({PARTNER_CASE})", PARTNER_KEEP_IDS, alone[1],
                                         together[1])):
        a, b = shown(solo, keep_ids), shown(both, keep_ids)
        if a != b:
            failures.append(f"concurrent: {label}: alone {json.dumps(a, ensure_ascii=False, default=str)} vs "
                            f"concurrent {json.dumps(b, ensure_ascii=False, default=str)}")
    if failures:
        raise AssertionError("\\n".join(failures))
    print(f"OK: {CELL} behaves as expected")
'''


def _partner_source(replayed: Replayed, parts: EngineRepro, ids_of: Any) -> str:
    """The concurrent mode's data beside the cell's: the partner request, its chunking, the schedule."""
    partner = replayed.partner
    assert partner is not None and parts.request_args is not None
    per_chunk, final = ids_of(partner.chunks)
    steps = [(c.text, ids) for c, ids in zip(partner.chunks, per_chunk, strict=True)]
    order = [(step.stream, step.index) for step in schedule(len(replayed.chunkings[0]), len(partner.chunks))]
    return "\n".join([
        f"PARTNER_CASE = {partner.sample.case.id!r}  # the other request, interleaved with this one",
        f"PARTNER_TEXT = {partner.sample.text!r}  # its model output",
        f"PARTNER_REQUEST = {parts.request_args(partner.sample)!r}  # run_stream's arguments for it",
        f"PARTNER_KEEP_IDS = {partner.sample.case.native_ids!r}",
        f"PARTNER_CHUNKING = ({steps!r}, {final!r})  # one token per step",
        f"REPLAYS_AT_FINISH = {parts.replays_at_finish!r}  # does a stream reach the server whole at its finish",
        "# the order in which the server gets both requests' steps: (0: this request, 1: the partner; chunk index,",
        "# None for the finish)",
        f"SCHEDULE = {order!r}",
    ])


def _mode_line(replayed: Replayed) -> str:
    """What the repro's mode runs, for its header."""
    if replayed.cell.mode == "responses":
        return "the Responses API's one-shot response to the whole output, read as its output items"
    if mode(replayed.cell.mode).surface == "responses":
        return (f"the Responses API's streamed events, {len(replayed.chunkings)} chunking(s) below, one engine step "
                "per chunk, read as a client reads them")
    if replayed.cell.mode == "batch":
        return "one-shot parsing of the whole output"
    if replayed.partner is not None:
        return (f"this request and {replayed.partner.sample.case.id}'s streamed through one server, one token per "
                "step, interleaved; each must come out as it does alone")
    return f"streaming, {len(replayed.chunkings)} chunking(s) below, one engine step per chunk"


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
        f"mode {cell.mode}: {_mode_line(replayed)}\n\n"
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
        f"STREAMING = {mode(cell.mode).streaming!r}",
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
        *(["", "", _partner_source(replayed, parts, ids_of)] if replayed.partner is not None else []),
    ])
    concurrent = replayed.partner is not None
    on_responses = mode(cell.mode).surface == "responses"
    if on_responses and "def respond_batch" not in parts.code:
        raise SystemExit(f"repro: {cell.id}: {replayed.engine.name}'s repro does not drive its Responses API")
    shared = [f"{parts.shared} = functools.cache({parts.shared})  # one server for both requests, as the matrix "
              "opens both streams on one parser object"] if concurrent and parts.shared else []
    body = [
        header,
        '"""Reproduces one cell of the parser conformance matrix; see the comment above."""',
        "from __future__ import annotations",
        "\n".join(["import sys", *(["import threading"] if concurrent else []), "from pathlib import Path",
                   *CHECKS_IMPORTS, *(RESPONSES_IMPORTS if on_responses else ()), *parts.imports]),
        "HERE = Path(__file__).resolve().parent",
        data,
        "# ---- the engine, driven the way its server drives it ----",
        "\n\n\n".join([parts.code.strip("\n"), *shared, *([RESPONSES_ENTRY.strip("\n")] if on_responses else [])]),
        (CONCURRENT_MAIN if concurrent else MAIN).strip("\n"),
        *(f"# ---- {m.__name__.replace('.', '/')}.py of the conformance matrix, inlined ----\n"
          + _without_project_imports(m) for m in parts.sources),
        "# ---- the conformance matrix's message types and checks, inlined (contract/) ----\n" + _checks_source(),
        *(["# ---- how the matrix reads the Responses API, inlined (contract/grading/responses.py) ----\n"
           + _checks_source(RESPONSES_SOURCE)] if on_responses else []),
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
    cells = document["cells"]
    tier = document["run"].vocabulary
    passed = [c for c in cells if c.outcome == "pass"]
    interleaved = [c for c in passed if mode(c.mode).isolation]
    concurrent_slot = 1 if interleaved and passing > 1 else 0  # one of the passing repros is a concurrent cell's
    alone = _spread([c for c in passed if not mode(c.mode).isolation], passing - concurrent_slot)
    known = [c for c in cells if c.outcome == "xfail" and not _unwritable(c)]
    sample = ([("xfail", c) for c in _spread(known, known_broken)]
              + [("pass", c) for c in alone + _spread(interleaved, passing - len(alone))])
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


def _unwritable(record: CellRecord) -> bool:
    """A cell whose forced choice's text could not be derived: it has no standalone repro."""
    return any(f.check == "error" and f.detail.startswith(f"{UnwritableText.__name__}:") for f in record.failures)


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
