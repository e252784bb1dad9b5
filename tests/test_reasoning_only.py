"""A reasoning parser its server runs with no tool parser (a pipeline whose `tool` is None): its tool cases and
the cases whose output holds a call are n/a, the other reasoning cases are graded."""

from __future__ import annotations

from contract.grading.adapter import engine_module
from contract.grading.cell import Cell, settled
from contract.run.plan import plan
from fixtures import all_families

FAMILIES = all_families()


def _cell(case: str, calls_parsed: bool) -> Cell:
    return Cell("lmdeploy", "lmdeploy", "deepseek-v3", "deepseek_v3", case, "batch", calls_parsed=calls_parsed)


def test_tool_cases_and_outputs_with_calls_are_na_without_a_tool_parser() -> None:
    for case in ("tool.single", "tool.none", "reasoning.then_tool", "reasoning.quoted_call"):
        assert settled(_cell(case, calls_parsed=False), FAMILIES)["outcome"] == "n/a", case
        assert "no tool parser" in settled(_cell(case, calls_parsed=False), FAMILIES)["reason"]


def test_reasoning_cases_without_calls_are_graded_without_a_tool_parser() -> None:
    for case in ("reasoning.only", "reasoning.unterminated", "reasoning.leading_whitespace"):
        assert settled(_cell(case, calls_parsed=False), FAMILIES) is None, case


def test_a_parser_with_a_tool_parser_grades_its_tool_cases() -> None:
    assert settled(_cell("tool.single", calls_parsed=True), FAMILIES) is None


def test_the_plan_marks_pipelines_without_a_tool_parser() -> None:
    assert "deepseek-v3" in engine_module("lmdeploy").without_tool_parser
    assert "qwen3" not in engine_module("lmdeploy").without_tool_parser
    cells = plan(["lmdeploy"], ["deepseek_v3", "hermes"], ["batch"], ["tool.single"], registry=FAMILIES)
    assert {(c.parser_name, c.calls_parsed) for c in cells} == {("deepseek-v3", False), ("qwen3", True)}
