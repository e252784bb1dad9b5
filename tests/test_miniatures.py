"""Every miniature parser is flagged exactly where its one defect bites, and nowhere else.

The oracle for each defect is derived from the case catalog (what the scenario contains), not from
a list of cells, so a framework that stops detecting a bug class, or starts flagging correct
behaviour, fails here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from grading_run import Run, grade

from contract.cases.catalog import Call, Content, Reasoning, Stray, Style, Truncation, case
from contract.cases.family import Sample
from contract.cases.model import forced
from contract.cases.rendering import Kind
from contract.grading.checks import INCREMENTAL_BOUND, INCREMENTAL_MODES
from contract.streams.chunking import mode
from contract.streams.tokenizer import family_stream
from fixtures import family
from parsers.reference.families import grammar
from parsers.reference.families import hermes as hermes_reference
from tests.miniatures.defects import DEFECTS, KILLERS
from tests.miniatures.v2 import V2

pytestmark = pytest.mark.slow  # every test reads the miniatures' grades, made once per worker (`run`)

FAILING = ("fail", "error", "timeout")
KILLER_MODES = ("batch", "tokens", "random")  # each of their failing cells costs a worker, so fewer modes
KILLER_CASES = ("reasoning.only", "reasoning.prefilled", "tool.single")  # and cases: two that trigger, one not
V2_MODES = ("batch", "tokens")  # catalog v2's defects: one shot and token by token (and a single delta for one)
SPACING = "drops_whitespace_deltas"  # graded where its oracle is exact: one shot, one delta, one token per delta
SPACING_MODES = ("batch", "whole", "tokens")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Every miniature with the default limits, except those that hang, abort or blow up memory: they are
    graded apart, with a 1 s hang bound and a 256 MiB memory limit, in three modes and three cases. Catalog v2's miniatures
    are graded apart too, to keep the run short: one shot and token by token (and a single delta for the one
    that does not stream incrementally, which must pass there)."""
    tmp = tmp_path_factory.mktemp("miniatures")
    others = " and ".join(f"not {name}" for name in (*KILLERS, *V2, SPACING))
    main = grade(tmp / "main", "--engine", "tests.miniatures", "-n", "2", "-k", others)
    killers = grade(tmp / "killers", "--engine", "tests.miniatures", "--hang-after", "1", "--memory-limit", "256",
                    *(a for m in KILLER_MODES for a in ("--mode", m)), *(a for c in KILLER_CASES for a in ("--case", c)),
                    "-n", "2", "-k", " or ".join(KILLERS))
    v2 = grade(tmp / "v2", "--engine", "tests.miniatures", *(a for m in (*V2_MODES, "whole") for a in ("--mode", m)),
               "-n", "2", "-k", f"holds_whole_calls or (({' or '.join(V2)}) and not whole)")
    spacing = grade(tmp / "spacing", "--engine", "tests.miniatures", *(a for m in SPACING_MODES for a in ("--mode", m)),
                    "-n", "2", "-k", SPACING)
    runs = (main, killers, v2, spacing)
    cells = [c for r in runs for c in r.results["cells"]]
    return Run(max(r.returncode for r in runs), "".join(r.output for r in runs), {**main.results, "cells": cells})


def _sample(parser: str, case_id: str) -> Sample:
    position = family(DEFECTS[parser.split("/", 1)[1]].family).sample(case(case_id))
    assert isinstance(position, Sample)
    return position


def content_after_a_call(s: Sample, mode: str) -> bool:
    segments = s.scenario.segments
    first_call = next((i for i, seg in enumerate(segments) if isinstance(seg, Call)), None)
    return first_call is not None and any(isinstance(seg, Content) for seg in segments[first_call:])


def spaced_by_whitespace_tokens(s: Sample, mode: str) -> bool:
    """Token by token, a run of whitespace between two words of the content that is whitespace-only tokens alone
    (as a tokenizer splits "\n\n" before a word) reaches the client as deltas of its own."""
    if mode != "tokens":
        return False
    stream = family_stream(family(s.family), s.rendered)
    blank = {at for piece, start in zip(stream.pieces, stream.offsets(), strict=False) if piece and not piece.strip()
             for at in range(start, start + len(piece))}
    where = [at for span in s.rendered.spans if span.kind is Kind.CONTENT for at in range(span.start, span.end)]
    content = "".join(s.text[at] for at in where)  # kept pieces glued; where[i] indexes its char i in s.text
    return any(all(where[at] in blank for at in range(*gap.span())) for gap in re.finditer(r"(?<=\S)\s+(?=\S)", content))


def marker_after_start(s: Sample, mode: str) -> bool:
    """Only re-chunked text splits a marker of these single-token formats (none is one under tool_choice "none")."""
    if mode != "chars" or s.context.tool_choice == "none":
        return False
    fam = family(s.family)
    body = s.text.lstrip()
    opener = fam.reasoning.opener if fam.reasoning else None
    if opener and body.startswith(opener):
        body = body[len(opener):]
    return any(marker in body for marker in fam.markers)


def section_cut(s: Sample, mode: str) -> bool:
    """Also where a long argument streams: held until the section ends, it passes the incremental bound."""
    cut_in_section = (Truncation.SECTION_END, Truncation.IN_ARGUMENTS, Truncation.IN_NAME)
    cut = s.scenario.truncation in cut_in_section and bool(s.scenario.calls)
    return cut or long_arguments(s, mode)


def native_ids(s: Sample, mode: str) -> bool:
    return s.case.native_ids


def call_inside_open_reasoning(s: Sample, mode: str) -> bool:
    return s.scenario.truncation is Truncation.REASONING_UNCLOSED and bool(s.scenario.calls)


def dotted_name(s: Sample, mode: str) -> bool:
    return any("." in c.name for c in s.scenario.calls)


def quoted_arguments(s: Sample, mode: str) -> bool:
    """Calls with arguments, parsed as calls (not under tool_choice "none")."""
    return s.context.tool_choice != "none" and any(c.arguments or c.raw_arguments for c in s.scenario.calls)


def sunny_answer(s: Sample, mode: str) -> bool:
    return "sunny" in s.expected.preferred.content


def _strings(value: object) -> list[str]:
    """Every string inside an argument value, object keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [k, *_strings(v)]]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def union_typed_value(s: Sample, mode: str) -> bool:
    """A value that is no string, declared by a type list, anyOf or oneOf (tool.schema_types' `note` too)."""
    for call in s.scenario.calls:
        tool = s.context.tool(call.name)
        properties = tool.parameters.get("properties", {}) if tool else {}
        if any(k in properties and not isinstance(properties[k].get("type"), str)
               for k, v in call.arguments.items() if not isinstance(v, str)):
            return True
    return False


def null_string(s: Sample, mode: str) -> bool:
    return any(v.strip().lower() == "null" for c in s.scenario.calls for v in c.arguments.values()
               if isinstance(v, str))


def _strays(s: Sample) -> list[str]:
    return [seg.marker for seg in s.scenario.segments if isinstance(seg, Stray)]


def stray_marker(s: Sample, mode: str) -> bool:
    """A lone marker outside a section that opens none."""
    return any(m not in grammar(s.family).starts for m in _strays(s))


def false_start(s: Sample, mode: str) -> bool:
    """A start marker followed by prose."""
    return any(m in grammar(s.family).starts for m in _strays(s))


def _malformed(s: Sample) -> list[Call]:
    """Calls written with invalid JSON, in an output that ended by itself (a cut one is left to the reference)."""
    return [c for c in s.scenario.calls if c.raw_arguments is not None and s.stop != "length"]


def malformed_call(s: Sample, mode: str) -> bool:
    """One shot: a malformed call next to a good one (the good call is lost; a malformed call alone as content is
    an accepted outcome). Streaming is right, but wherever a call is malformed it differs from the one shot."""
    if mode == "batch":
        return bool(_malformed(s)) and len(_malformed(s)) < len(s.scenario.calls)
    return bool(_malformed(s))


def quote_before_close(s: Sample, mode: str) -> bool:
    """A string argument with an odd number of quotes (escaped in JSON) before the block's close marker text."""
    close = hermes_reference.SPEC.close
    return any(close in t and t[: t.index(close)].count('"') % 2 for c in s.scenario.calls for t in _strings(c.arguments))


def _unbalanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char in "{[") - (char in "}]")
        if depth < 0:
            return True
    return depth != 0


def unbalanced_brackets(s: Sample, mode: str) -> bool:
    return any(_unbalanced(t) for c in s.scenario.calls for t in _strings(c.arguments))


def whitespace_before_first_call(s: Sample, mode: str) -> bool:
    return s.text[:1].isspace() and isinstance(s.scenario.segments[0], Call)


def unmarked_call_after_prose(s: Sample, mode: str) -> bool:
    """A call after prose that no marker announces (Llama's bare object on its own line)."""
    if any(marker in s.text for marker in family(s.family).markers):
        return False
    segments = s.scenario.segments
    first_call = next((i for i, seg in enumerate(segments) if isinstance(seg, Call)), None)
    return first_call is not None and any(isinstance(seg, Content) and seg.text.strip()
                                          for seg in segments[:first_call])


def styled(style: Style) -> Callable[[Sample, str], bool]:
    """Where the catalog's variant is written: only the style identifies it."""
    return lambda s, mode: s.scenario.style is style


def quoted_section_start(s: Sample, mode: str) -> bool:
    """Reasoning text that quotes a tool-section start (and is then closed)."""
    style = family(s.family).reasoning
    return style is not None and any(isinstance(seg, Reasoning) and any(m in seg.text for m in style.implicit_end)
                                     for seg in s.scenario.segments)


def reopened_opener(s: Sample, mode: str) -> bool:
    style = family(s.family).reasoning
    return style is not None and style.prefilled(s.context) and s.text.lstrip().startswith(style.opener)


def whitespace_before_opener(s: Sample, mode: str) -> bool:
    style = family(s.family).reasoning
    return (style is not None and not style.prefilled(s.context) and s.text[:1].isspace()
            and s.text.lstrip().startswith(style.opener))


def long_arguments(s: Sample, mode: str) -> bool:
    """A call's argument text (non-space characters, as written) longer than the bound, streamed in pieces."""
    return mode in INCREMENTAL_MODES and any(
        len("".join(s.text[span.start : span.end].split())) > INCREMENTAL_BOUND
        for span in s.rendered.spans if span.kind is Kind.ARGUMENTS)


def thinking_flag_absent(s: Sample, mode: str) -> bool:
    return s.context.thinking is None


def no_tool_chosen(s: Sample, mode: str) -> bool:
    """A call written under tool_choice "none"."""
    return s.context.tool_choice == "none" and bool(s.scenario.calls)


def stale_closer_in_prompt(s: Sample, mode: str) -> bool:
    """The output reasons, and the last reasoning marker in its prompt is a closer (an earlier turn's)."""
    style = family(s.family).reasoning
    tail = s.context.prompt_tail
    reasons = any(isinstance(segment, Reasoning) for segment in s.scenario.segments)
    return style is not None and reasons and tail.rfind(style.closer) > tail.rfind(style.opener)


def forced_call(s: Sample, mode: str) -> bool:
    """A call written under a forced tool_choice ("required" or a named function)."""
    return forced(s.context.tool_choice) and bool(s.scenario.calls)


def interleaved(s: Sample, mode: str) -> bool:
    """Its global is the whole machine state: the partner request switches it whatever the case writes."""
    return mode == "concurrent"


ORACLES: dict[str, tuple[Callable[[Sample, str], bool], str]] = {
    "drops_trailing_text": (content_after_a_call, "fail"),
    SPACING: (spaced_by_whitespace_tokens, "fail"),
    "leaks_split_marker": (marker_after_start, "fail"),
    "loses_calls_without_section_end": (section_cut, "fail"),
    "rewrites_native_ids": (native_ids, "fail"),
    "swallows_call_in_reasoning": (call_inside_open_reasoning, "fail"),
    "crashes_on_dotted_names": (dotted_name, "error"),
    "arguments_not_json": (quoted_arguments, "fail"),
    "hangs": (sunny_answer, "timeout"),
    "hangs_in_native_code": (sunny_answer, "timeout"),
    "aborts": (sunny_answer, "error"),
    "exhausts_memory": (sunny_answer, "error"),
    # catalog v2
    "ignores_schema_unions": (union_typed_value, "fail"),
    "reads_null_strings_as_null": (null_string, "fail"),
    "leaks_stray_markers": (stray_marker, "fail"),
    "keeps_false_start_marker": (false_start, "fail"),
    "all_or_nothing_batch": (malformed_call, "fail"),
    "ends_string_at_escaped_quote": (quote_before_close, "fail"),
    "counts_brackets_in_strings": (unbalanced_brackets, "fail"),
    "bare_list_only_at_offset_zero": (whitespace_before_first_call, "fail"),
    "no_arguments_null": (styled(Style.NO_ARGUMENTS), "fail"),
    "ignores_bare_functions": (styled(Style.UNWRAPPED), "fail"),
    "requires_args_token": (styled(Style.CONTROL_SKIPPED), "fail"),
    "drops_counter_calls": (styled(Style.COUNTER_ID), "fail"),
    "double_encodes_string_arguments": (styled(Style.STRING_ARGUMENTS), "fail"),
    "drops_single_object": (styled(Style.SINGLE_OBJECT), "fail"),
    "calls_only_at_start": (unmarked_call_after_prose, "fail"),
    "implicit_end_at_once": (quoted_section_start, "fail"),
    "keeps_reopened_opener": (reopened_opener, "fail"),
    "opener_only_at_offset_zero": (whitespace_before_opener, "fail"),
    "holds_whole_calls": (long_arguments, "fail"),
    # catalog v3
    "keeps_state_in_module_global": (interleaved, "fail"),
    "assumes_thinking_without_flag": (thinking_flag_absent, "fail"),
    "ignores_tool_choice": (no_tool_chosen, "fail"),
    "reads_prompts_last_closer": (stale_closer_in_prompt, "fail"),
    "reads_markup_under_json_constraint": (forced_call, "fail"),
}


LEAKS_BETWEEN_REQUESTS = ("keeps_state_in_module_global",)


def bites(name: str, sample: Sample, mode_name: str) -> bool:
    """Where the oracle says the defect shows. A defect within one request (all but those that leak between
    requests) comes out the same interleaved with another request as alone: the concurrent mode, which compares
    the two, passes."""
    if mode(mode_name).isolation and name not in LEAKS_BETWEEN_REQUESTS:
        return False
    return ORACLES[name][0](sample, mode_name)


def test_every_miniature_has_an_oracle() -> None:
    assert set(ORACLES) | {"duplicates_text", "slow_but_correct"} == set(DEFECTS)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_flagged_exactly_where_the_defect_bites(run: Run, name: str) -> None:
    outcome = ORACLES[name][1]
    graded = [c for c in run.cells(parser=f"miniature/{name}") if c.outcome != "n/a"]
    assert graded, "the miniature was not graded"
    wrong = []
    for cell in graded:
        want = outcome if bites(name, _sample(cell.parser, cell.case), cell.mode) else "pass"
        if cell.outcome != want:
            wrong.append(f"{cell.case} {cell.mode}: {cell.outcome} (want {want}) {cell.failures[:1]}")
    assert not wrong, "\n".join(wrong)
    assert any(c.outcome == outcome for c in graded), "the defect was never caught"


def test_leak_is_reported_as_a_marker_fragment(run: Run) -> None:
    """A leaked fragment is named as such; where raw markup is an acceptable outcome (malformed or
    unknown calls handed back as text), the stream still differs from the batch result."""
    failing = run.cells(parser="miniature/leaks_split_marker", outcome="fail")
    assert failing
    for cell in failing:
        checks = {f.check for f in cell.failures}
        assert "markers" in checks or (
            "stream_equals_batch" in checks and any(e["markup_allowed"] for e in cell.expected)
        ), cell.failures
        assert cell.chunking, "a streaming failure keeps its failing chunking"


def test_duplication_is_a_streaming_failure(run: Run) -> None:
    """Batch and a single delta are correct; with several deltas, content repeats and is named so."""
    cells = run.cells(parser="miniature/duplicates_text")
    for cell in cells:
        s = _sample(cell.parser, cell.case) if cell.outcome != "n/a" else None
        if s is None:
            continue
        has_content = bool(s.expected.preferred.content.strip())
        if cell.mode in ("batch", "whole") or not has_content:
            assert cell.outcome == "pass", (cell.case, cell.mode, cell.failures)
        elif cell.mode == "tokens":
            assert cell.outcome == "fail", (cell.case, cell.failures)
        if cell.outcome == "fail":
            assert "duplication" in {f.check for f in cell.failures}, cell.failures


def test_generated_modes_keep_the_failing_chunking(run: Run) -> None:
    cells = run.cells(parser="miniature/rewrites_native_ids", case="tool.native_id", mode="random")
    assert cells and cells[0].outcome == "fail"
    assert cells[0].examples >= 1
    assert cells[0].chunking and "".join(cells[0].chunking) == cells[0].input["text"]


def test_failing_cells_fail_the_run(run: Run) -> None:
    assert run.returncode == 1, run.output[-2000:]


def test_crash_and_hang_are_recorded_not_raised(run: Run) -> None:
    crashed = run.cells(parser="miniature/crashes_on_dotted_names", case="tool.name_chars", mode="batch")[0]
    assert crashed.outcome == "error" and "invalid tool name" in crashed.error
    hung = run.cells(parser="miniature/hangs", case="reasoning.only", mode="tokens")[0]
    assert hung.outcome == "timeout"
    assert len(run.results["cells"]) == len({(c.parser, c.case, c.mode) for c in run.results["cells"]})
    assert Path((run.results["run"].command or "").split()[0]).name == "pytest"


def _one(run: Run, parser: str, mode: str) -> dict:
    cells = run.cells(parser=f"miniature/{parser}", case="reasoning.only", mode=mode)
    assert len(cells) == 1, cells
    return cells[0]


def test_a_native_hang_is_stopped_and_says_where(run: Run) -> None:
    """The regex spins inside C: only stopping the worker process ends it. The cell names the delta. (On an
    overloaded machine the spinning worker may get under a quarter of a core, and the wall-time limit
    stops it first: the same verdict, said as "blocked".)"""
    cell = _one(run, "hangs_in_native_code", "tokens")
    assert cell.outcome == "timeout"
    detail = cell.failures[0].detail
    assert re.match(r"hung: (no progress after .* of CPU time|blocked for \d+ s without returning), in feed\(\) "
                    r"of delta", detail), detail
    assert "sunny" in detail  # the delta that completed the trigger word is quoted
    assert _one(run, "hangs_in_native_code", "batch").failures[0].detail.endswith("in parse() (one shot)")


def test_an_aborted_interpreter_is_an_error_with_its_signal_and_stack(run: Run) -> None:
    cell = _one(run, "aborts", "tokens")
    assert cell.outcome == "error"
    assert cell.failures[0].detail.startswith("the worker died of SIGABRT, in feed() of delta")
    assert "Fatal Python error: Aborted" in cell.error and "in strike" in cell.error  # faulthandler's stack


def test_a_memory_bomb_is_stopped_at_the_limit(run: Run) -> None:
    """Stopped by the grader at 256 MiB, not by the miniature's own 8 GiB cap (which would say MemoryError)."""
    cell = _one(run, "exhausts_memory", "batch")
    assert cell.outcome == "error"
    assert cell.failures[0].detail.startswith("memory: the worker grew by"), cell.failures
    assert "(limit 256 MiB), in parse() (one shot)" in cell.failures[0].detail


def test_grading_goes_on_after_a_killed_worker(run: Run) -> None:
    """Each killer's cells that do not trigger it still pass: every one after a kill ran in a new worker."""
    for name in KILLERS:
        cells = run.cells(parser=f"miniature/{name}")
        assert len(cells) == len(KILLER_MODES) * len(KILLER_CASES)
        assert any(c.outcome == "pass" for c in cells)


def test_slow_is_a_figure_not_a_verdict(run: Run) -> None:
    """A parser that is right but slow passes every cell; its slowdown against the reference parser on the
    same input is recorded (large on a 16 KiB argument), an honest miniature's is not."""
    slow = [c for c in run.cells(parser="miniature/slow_but_correct") if c.outcome != "n/a"]
    assert slow and all(c.outcome == "pass" for c in slow), [c.case for c in slow if c.outcome != "pass"]
    long_batch = run.cells(parser="miniature/slow_but_correct", case="tool.long_args", mode="batch")[0]
    assert long_batch.slowdown >= 20 and long_batch.parse_cpu_s > long_batch.reference_cpu_s
    honest = run.cells(parser="miniature/drops_trailing_text", case="tool.long_args", mode="batch")[0]
    assert honest.slowdown < 5
    assert all(c.parse_cpu_s is not None for c in slow)


def test_holding_whole_calls_fails_only_the_incremental_check(run: Run) -> None:
    """Right in every mode: what it gets wrong is when the argument text arrives, and only that is named."""
    cells = run.cells(parser="miniature/holds_whole_calls")
    failing = [c for c in cells if c.outcome == "fail"]
    assert failing
    for cell in failing:
        assert {f.check for f in cell.failures} == {"incremental"}, cell.failures
        assert cell.withheld > INCREMENTAL_BOUND and cell.chunking
    whole = run.cells(parser="miniature/holds_whole_calls", case="tool.long_args", mode="whole")
    assert whole and whole[0].outcome == "pass"


def test_an_all_or_nothing_batch_is_caught_by_the_stream(run: Run) -> None:
    """The one-shot path loses the good call; the streamed one is right and is flagged only as differing."""
    for cell in run.cells(parser="miniature/all_or_nothing_batch", outcome="fail"):
        checks = {f.check for f in cell.failures}
        assert checks == {"stream_equals_batch"} if cell.mode != "batch" else "stream_equals_batch" not in checks
