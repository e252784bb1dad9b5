"""The text a forced tool_choice has the model write (`contract.cases.forced`), and how its cases are judged."""

from __future__ import annotations

import json

import pytest

from contract.cases.catalog import case
from contract.cases.family import Sample
from contract.cases.forced import (
    ForcedText,
    TaggedCalls,
    UnwritableText,
    shape_of_schema,
    shapes_for,
    tagged_calls,
)
from contract.cases.model import Message, NamedChoice, ToolCall, choice_json, forced
from contract.cases.rendering import Kind
from contract.grading import checks
from fixtures import family

PARIS_ARGUMENTS = {"city": "Paris", "days": 3}


def _sample(family_name: str, case_id: str = "tool.choice_required") -> Sample:
    sample = family(family_name).sample(case(case_id))
    assert isinstance(sample, Sample)
    return sample


def test_a_named_choice_is_sent_as_openai_spells_it() -> None:
    assert choice_json(NamedChoice("get_weather")) == {"type": "function", "function": {"name": "get_weather"}}
    assert choice_json("required") == "required"
    assert [forced(c) for c in ("auto", "none", "required", NamedChoice("f"))] == [False, False, True, True]


@pytest.mark.parametrize(("shape", "text"), [
    (ForcedText.JSON_CALLS, '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}]'),
    (ForcedText.JSON_CALLS_ARGUMENTS, '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]'),
    (ForcedText.JSON_ARGUMENTS, '{"city": "Paris", "days": 3}'),
])
def test_json_shapes_keep_the_reasoning_closer_and_rewrite_the_calls(shape: ForcedText, text: str) -> None:
    """ERNIE 4.5's output closes the prompt's think block before the call: the constraint starts after it."""
    native = _sample("ernie45")
    assert native.text.startswith("</think>")
    written = native.written_as(shape)
    assert written.text == "</think>" + text
    assert written.expected == native.expected  # the same calls, whatever the shape
    arguments = written.rendered.pieces(Kind.ARGUMENTS)
    assert [json.loads(a) for a in arguments] == [PARIS_ARGUMENTS]
    assert "".join(written.rendered.text[s.start:s.end] for s in written.rendered.spans) == written.text


def test_the_native_shape_is_the_sample_itself() -> None:
    native = _sample("hermes")
    assert native.written_as(ForcedText.NATIVE) == native


def test_tagged_calls_write_the_tags_literal_around_the_json_arguments() -> None:
    tag = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [
        {"type": "tag", "begin": '<tool_call>{"name": "get_time", "arguments": ',
         "content": {"type": "json_schema", "json_schema": {}}, "end": "}</tool_call>"},
        {"type": "tag", "begin": '<tool_call>{"name": "get_weather", "arguments": ',
         "content": {"type": "json_schema", "json_schema": {}}, "end": ["}</tool_call>", "}<|end|>"]},
    ]}}
    tagged = tagged_calls(tag, ["get_weather"], near="<tool_call>\n")
    assert tagged == TaggedCalls((("get_weather", '<tool_call>{"name": "get_weather", "arguments": ',
                                   "}</tool_call>"),))
    written = _sample("hermes").written_as(tagged)
    assert written.text == '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'
    assert tagged_calls(tag, ["search"], missing_ok=True) is None
    with pytest.raises(ValueError, match="search"):
        tagged_calls(tag, ["search"])
    assert issubclass(UnwritableText, ValueError)


def test_tags_naming_a_function_by_a_longer_name_are_not_its_tags() -> None:
    tag = {"type": "tag", "begin": "<call get_weather_daily>", "content": {"type": "json_schema"}, "end": "</call>"}
    assert tagged_calls(tag, ["get_weather"], missing_ok=True) is None


@pytest.mark.parametrize(("schema", "shape"), [
    ({"type": "array", "minItems": 1, "items": {"anyOf": [{"properties": {"name": {"enum": ["f"]}, "parameters": {}},
                                                           "required": ["name", "parameters"]}]}}, ForcedText.JSON_CALLS),
    ({"type": "array", "items": {"properties": {"name": {}, "arguments": {}}}}, ForcedText.JSON_CALLS_ARGUMENTS),
    ({"type": "object", "properties": {"city": {"type": "string"}}}, ForcedText.JSON_ARGUMENTS),
])
def test_a_json_schema_names_its_shape(schema: dict, shape: ForcedText) -> None:
    assert shape_of_schema(schema) is shape
    assert shape_of_schema(json.dumps(schema)) is shape


def test_a_schema_of_no_known_shape_is_an_error_not_a_guess() -> None:
    with pytest.raises(ValueError, match="no known call shape"):
        shape_of_schema({"type": "array", "items": {"properties": {"tool": {}, "input": {}}}})


def test_the_stored_draws_cover_the_shapes_each_choice_may_take() -> None:
    assert set(shapes_for("required")) >= {ForcedText.NATIVE, ForcedText.JSON_CALLS}
    assert ForcedText.JSON_ARGUMENTS in shapes_for(NamedChoice("get_weather"))
    assert shapes_for("auto") == (ForcedText.NATIVE,)


@pytest.mark.parametrize(("finish", "label"), [("tool_calls", "the call"),
                                                ("stop", "the call, finished as OpenAI answers a named choice")])
def test_a_named_choice_may_finish_either_way(finish: str, label: str) -> None:
    sample = _sample("hermes", "tool.choice_named")
    observed = Message(tool_calls=(ToolCall("get_weather", json.dumps(PARIS_ARGUMENTS), "call_1"),), finish_reason=finish)
    failures, notes, outcome = checks.judge_message(sample.expected, (), (), observed)
    assert failures == [] and outcome.label == label and f"acceptable outcome: {label}" in notes


def test_required_must_finish_with_tool_calls() -> None:
    sample = _sample("hermes")
    observed = Message(tool_calls=(ToolCall("get_weather", json.dumps(PARIS_ARGUMENTS), "call_1"),), finish_reason="stop")
    failures, _, _ = checks.judge_message(sample.expected, (), (), observed)
    assert [f.check for f in failures] == ["finish_reason"]
