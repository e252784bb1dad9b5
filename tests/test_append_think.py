"""A parser that keeps the think block in content is graded as such only when its engine declares it."""

from __future__ import annotations

import pytest
from grading_run import Run, grade

CASES = ("reasoning.only", "reasoning.then_tool", "reasoning.then_content_and_tool", "tool.single",
         "tool.content_before")
WITH_REASONING = {"reasoning.only", "reasoning.then_tool", "reasoning.then_content_and_tool"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    selection = [arg for c in CASES for arg in ("--case", c)] + ["--mode", "batch", "--mode", "tokens"]
    return grade(tmp_path_factory.mktemp("append_think"), "--engine", "tests.miniatures.append_think", *selection)


def test_declared_append_think_passes_everywhere(run: Run) -> None:
    cells = run.cells(parser="append_think/declared")
    assert len(cells) == 2 * len(CASES)
    assert {c.outcome for c in cells} == {"pass"}, [(c.case, c.mode, c.failures) for c in cells]
    kept = next(c for c in cells if c.case == "reasoning.only" and c.mode == "batch")
    assert kept.expected[0]["content"].startswith("<think>") and kept.expected[0]["reasoning"] == ""


def test_undeclared_fails_exactly_where_the_output_reasons(run: Run) -> None:
    failing = {c.case for c in run.cells(parser="append_think/undeclared") if c.outcome != "pass"}
    assert failing == WITH_REASONING
