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

from contract.catalog import Call, Content, Truncation, case
from contract.family import Sample
from fixtures import family
from tests.miniatures.defects import DEFECTS, KILLERS

FAILING = ("fail", "error", "timeout")
KILLER_MODES = ("batch", "tokens", "random")  # each of their failing cells costs a worker, so fewer modes


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Every miniature with the default limits, except those that hang, abort or blow up memory: they are
    graded apart, with a 1 s hang bound and a 256 MiB memory limit, in three modes."""
    tmp = tmp_path_factory.mktemp("miniatures")
    others = " and ".join(f"not {name}" for name in KILLERS)
    main = grade(tmp / "main", "--engine", "tests.miniatures", "-n", "2", "-k", others)
    killers = grade(tmp / "killers", "--engine", "tests.miniatures", "--hang-after", "1", "--memory-limit", "256",
                    *(a for m in KILLER_MODES for a in ("--mode", m)), "-n", "2", "-k", " or ".join(KILLERS))
    cells = main.results["cells"] + killers.results["cells"]
    return Run(max(main.returncode, killers.returncode), main.output + killers.output,
               {**main.results, "cells": cells})


def _sample(parser: str, case_id: str) -> Sample:
    position = family(DEFECTS[parser.split("/", 1)[1]].family).sample(case(case_id))
    assert isinstance(position, Sample)
    return position


def content_after_a_call(s: Sample, mode: str) -> bool:
    segments = s.scenario.segments
    first_call = next((i for i, seg in enumerate(segments) if isinstance(seg, Call)), None)
    return first_call is not None and any(isinstance(seg, Content) for seg in segments[first_call:])


def marker_after_start(s: Sample, mode: str) -> bool:
    """Only re-chunked text splits a marker of these single-token formats."""
    if mode != "chars":
        return False
    fam = family(s.family)
    body = s.text.lstrip()
    opener = fam.reasoning.opener if fam.reasoning else None
    if opener and body.startswith(opener):
        body = body[len(opener):]
    return any(marker in body for marker in fam.markers)


def section_cut(s: Sample, mode: str) -> bool:
    return s.scenario.truncation in (Truncation.SECTION_END, Truncation.IN_ARGUMENTS) and bool(s.scenario.calls)


def native_ids(s: Sample, mode: str) -> bool:
    return s.case.native_ids


def call_inside_open_reasoning(s: Sample, mode: str) -> bool:
    return s.scenario.truncation is Truncation.REASONING_UNCLOSED and bool(s.scenario.calls)


def dotted_name(s: Sample, mode: str) -> bool:
    return any("." in c.name for c in s.scenario.calls)


def quoted_arguments(s: Sample, mode: str) -> bool:
    return any(c.arguments or c.raw_arguments for c in s.scenario.calls)


def sunny_answer(s: Sample, mode: str) -> bool:
    return "sunny" in s.expected.preferred.content


ORACLES: dict[str, tuple[Callable[[Sample, str], bool], str]] = {
    "drops_trailing_text": (content_after_a_call, "fail"),
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
}


def test_every_miniature_has_an_oracle() -> None:
    assert set(ORACLES) | {"duplicates_text", "slow_but_correct"} == set(DEFECTS)


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_flagged_exactly_where_the_defect_bites(run: Run, name: str) -> None:
    oracle, outcome = ORACLES[name]
    graded = [c for c in run.cells(parser=f"miniature/{name}") if c["outcome"] != "n/a"]
    assert graded, "the miniature was not graded"
    wrong = []
    for cell in graded:
        bites = oracle(_sample(cell["parser"], cell["case"]), cell["mode"])
        want = outcome if bites else "pass"
        if cell["outcome"] != want:
            wrong.append(f"{cell['case']} {cell['mode']}: {cell['outcome']} (want {want}) {cell['failures'][:1]}")
    assert not wrong, "\n".join(wrong)
    assert any(c["outcome"] == outcome for c in graded), "the defect was never caught"


def test_leak_is_reported_as_a_marker_fragment(run: Run) -> None:
    """A leaked fragment is named as such; where raw markup is an acceptable outcome (malformed or
    unknown calls handed back as text), the stream still differs from the batch result."""
    failing = run.cells(parser="miniature/leaks_split_marker", outcome="fail")
    assert failing
    for cell in failing:
        checks = {f["check"] for f in cell["failures"]}
        assert "markers" in checks or (
            "stream_equals_batch" in checks and any(e["markup_allowed"] for e in cell["expected"])
        ), cell["failures"]
        assert cell["chunking"], "a streaming failure keeps its failing chunking"


def test_duplication_is_a_streaming_failure(run: Run) -> None:
    """Batch and a single delta are correct; with several deltas, content repeats and is named so."""
    cells = run.cells(parser="miniature/duplicates_text")
    for cell in cells:
        s = _sample(cell["parser"], cell["case"]) if cell["outcome"] != "n/a" else None
        if s is None:
            continue
        has_content = bool(s.expected.preferred.content.strip())
        if cell["mode"] in ("batch", "whole") or not has_content:
            assert cell["outcome"] == "pass", (cell["case"], cell["mode"], cell["failures"])
        elif cell["mode"] == "tokens":
            assert cell["outcome"] == "fail", (cell["case"], cell["failures"])
        if cell["outcome"] == "fail":
            assert "duplication" in {f["check"] for f in cell["failures"]}, cell["failures"]


def test_generated_modes_keep_the_failing_chunking(run: Run) -> None:
    cells = run.cells(parser="miniature/rewrites_native_ids", case="tool.native_id", mode="random")
    assert cells and cells[0]["outcome"] == "fail"
    assert cells[0]["examples"] >= 1
    assert cells[0]["chunking"] and "".join(cells[0]["chunking"]) == cells[0]["input"]["text"]


def test_failing_cells_fail_the_run(run: Run) -> None:
    assert run.returncode == 1, run.output[-2000:]


def test_crash_and_hang_are_recorded_not_raised(run: Run) -> None:
    crashed = run.cells(parser="miniature/crashes_on_dotted_names", case="tool.name_chars", mode="batch")[0]
    assert crashed["outcome"] == "error" and "invalid tool name" in crashed["error"]
    hung = run.cells(parser="miniature/hangs", case="reasoning.only", mode="tokens")[0]
    assert hung["outcome"] == "timeout"
    assert len(run.results["cells"]) == len({(c["parser"], c["case"], c["mode"]) for c in run.results["cells"]})
    assert Path(run.results["run"]["command"].split()[0]).name == "pytest"


def _one(run: Run, parser: str, mode: str) -> dict:
    cells = run.cells(parser=f"miniature/{parser}", case="reasoning.only", mode=mode)
    assert len(cells) == 1, cells
    return cells[0]


def test_a_native_hang_is_stopped_and_says_where(run: Run) -> None:
    """The regex spins inside C: only stopping the worker process ends it. The cell names the delta. (On an
    overloaded machine the spinning worker may get under a quarter of a core, and the wall-time limit
    stops it first: the same verdict, said as "blocked".)"""
    cell = _one(run, "hangs_in_native_code", "tokens")
    assert cell["outcome"] == "timeout"
    detail = cell["failures"][0]["detail"]
    assert re.match(r"hung: (no progress after .* of CPU time|blocked for \d+ s without returning), in feed\(\) "
                    r"of delta", detail), detail
    assert "sunny" in detail  # the delta that completed the trigger word is quoted
    assert _one(run, "hangs_in_native_code", "batch")["failures"][0]["detail"].endswith("in parse() (one shot)")


def test_an_aborted_interpreter_is_an_error_with_its_signal_and_stack(run: Run) -> None:
    cell = _one(run, "aborts", "tokens")
    assert cell["outcome"] == "error"
    assert cell["failures"][0]["detail"].startswith("the worker died of SIGABRT, in feed() of delta")
    assert "Fatal Python error: Aborted" in cell["error"] and "in strike" in cell["error"]  # faulthandler's stack


def test_a_memory_bomb_is_stopped_at_the_limit(run: Run) -> None:
    """Stopped by the grader at 256 MiB, not by the miniature's own 8 GiB cap (which would say MemoryError)."""
    cell = _one(run, "exhausts_memory", "batch")
    assert cell["outcome"] == "error"
    assert cell["failures"][0]["detail"].startswith("memory: the worker grew by"), cell["failures"]
    assert "(limit 256 MiB), in parse() (one shot)" in cell["failures"][0]["detail"]


def test_grading_goes_on_after_a_killed_worker(run: Run) -> None:
    """Each killer's cells that do not trigger it still pass: every one after a kill ran in a new worker."""
    for name in KILLERS:
        cells = run.cells(parser=f"miniature/{name}")
        assert len(cells) == len(KILLER_MODES) * len(run.results["cases"])
        assert any(c["outcome"] == "pass" for c in cells)


def test_slow_is_a_figure_not_a_verdict(run: Run) -> None:
    """A parser that is right but slow passes every cell; its slowdown against the reference parser on the
    same input is recorded (large on a 16 KiB argument), an honest miniature's is not."""
    slow = [c for c in run.cells(parser="miniature/slow_but_correct") if c["outcome"] != "n/a"]
    assert slow and all(c["outcome"] == "pass" for c in slow), [c["case"] for c in slow if c["outcome"] != "pass"]
    long_batch = run.cells(parser="miniature/slow_but_correct", case="tool.long_args", mode="batch")[0]
    assert long_batch["slowdown"] >= 20 and long_batch["parse_cpu_s"] > long_batch["reference_cpu_s"]
    honest = run.cells(parser="miniature/drops_trailing_text", case="tool.long_args", mode="batch")[0]
    assert honest["slowdown"] < 5
    assert all(c["parse_cpu_s"] is not None for c in slow)
