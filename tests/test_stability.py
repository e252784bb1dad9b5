"""Verdicts do not depend on how busy the machine is: a slice of the matrix graded on an idle machine and
again with both cores kept busy (`--cpu-load 2`) gives the same outcome and failure signature in every cell.

The slice holds what a wall-clock limit used to get wrong: a parser that is right but slow (about 0.4 s of
CPU for one streamed 16 KiB argument, 25 chunkings of it in the chars mode), one that hangs (stopped after a 0.5 s CPU bound either way), and the
reference parsers with cells that pass and a miniature with cells that fail.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from grading_run import grade

from reports.compare import differences

# the cases that hold each ingredient (the long argument, the native id, the sunny answer the hanging miniature
# strikes on, calls), not the whole catalog: every case the family renders costs each run more hung cells
CASES = ("tool.long_args", "tool.native_id", "reasoning.only", "tool.single", "tool.parallel")
SLICE = ("--engine", "reference", "--engine", "tests.miniatures", "--family", "kimi_k2",
         *(a for c in CASES for a in ("--case", c)),
         "--mode", "batch", "--mode", "tokens", "--mode", "chars", "--hang-after", "0.5", "-n", "2",
         "-k", "reference or slow_but_correct or (hangs and not native) or rewrites_native_ids")


@pytest.mark.slow
def test_idle_and_loaded_runs_agree_on_every_cell(tmp_path: Path) -> None:
    idle = grade(tmp_path / "idle", *SLICE)
    loaded = grade(tmp_path / "loaded", *SLICE, "--cpu-load", "2")
    assert loaded.results["run"].cpu_load == 2 and idle.results["run"].cpu_load == 0
    outcomes = {c.outcome for c in idle.results["cells"]}
    assert {"pass", "fail", "timeout"} <= outcomes, outcomes  # the slice has passing, failing and hung cells
    slow = idle.cells(parser="miniature/slow_but_correct", case="tool.long_args", mode="tokens")[0]
    assert slow.outcome == "pass" and slow.parse_cpu_s > 0.2
    assert differences(idle.results["cells"], loaded.results["cells"]) == []
    # the busy run was slower, which is the point: the same verdicts anyway
    assert (loaded.results["run"].duration_s or 0) > (idle.results["run"].duration_s or 0)


def test_generated_chunkings_come_from_the_input_not_the_code() -> None:
    """A derandomized cell draws the same chunkings in a fresh grader; its seed is (family, case, mode), the
    same whichever parser faces it, and not a hash of the grading code."""
    from contract.cases.catalog import case
    from contract.grading.grader import Grader
    from contract.grading.subject import Subject, stable_seed
    from contract.run.plan import plan
    from contract.streams.chunking import mode
    from contract.streams.tokenizer import family_tokenizer, token_stream
    from fixtures import all_families, family

    families = all_families()
    cells = [c for c in plan(["tests.miniatures"], ["kimi_k2"], ["random", "chars"], ["tool.native_id"], registry=families)
             if c.parser_name == "rewrites_native_ids"]
    first = {c.id: Grader(families=families).grade(c) for c in cells}
    again = {c.id: Grader(families=families).grade(c) for c in cells}
    for cell in cells:
        assert first[cell.id].outcome == "fail" and first[cell.id].chunking
        assert (first[cell.id].chunking, first[cell.id].examples) == (again[cell.id].chunking,
                                                                      again[cell.id].examples)

    kimi = family("kimi_k2")
    sample = kimi.sample(case("tool.native_id"))
    stream = token_stream(family_tokenizer(kimi), sample.rendered)
    one, other = (Subject(parser, kimi, sample, stream) for parser in ("parser A", "parser B"))  # type: ignore[arg-type]
    assert stable_seed(one, mode("random")) == stable_seed(other, mode("random"))
    assert stable_seed(one, mode("random")) != stable_seed(one, mode("chars"))


def test_generated_chunkings_ignore_the_constants_of_local_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hypothesis draws some values from the literals of "local" modules (outside site-packages): this project's
    own code, or an engine installed editable from a checkout. The chunkings a cell tries (drawn live here, as the
    store's are drawn) must not change when such a module is imported."""
    from contract.cases.catalog import case
    from contract.streams.chunking import mode
    from contract.streams.drawn import draw_live, draw_of
    from contract.streams.profiles import CI, profile
    from contract.streams.tokenizer import family_tokenizer, token_stream
    from fixtures import family

    hermes = family("hermes")
    sample = hermes.sample(case("tool.parallel"))
    stream = token_stream(family_tokenizer(hermes), sample.rendered)
    draw = draw_of("hermes", "tool.parallel", mode("chars"), sample.text, stream, hermes.markers)
    before = draw_live(draw, profile(CI))
    probe = tmp_path / "checkout" / "engine_constants.py"
    probe.parent.mkdir()
    probe.write_text(f"CUTS = {list(range(1, len(sample.text)))}\nWORDS = {sample.text.split()}\n")
    monkeypatch.syspath_prepend(str(probe.parent))
    __import__("engine_constants")
    try:
        assert draw_live(draw, profile(CI)) == before
    finally:
        sys.modules.pop("engine_constants", None)
