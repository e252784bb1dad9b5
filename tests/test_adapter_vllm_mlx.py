"""vllm-mlx's adapter drives its server's Responses endpoint (`create_response`, one shot) and event generator
(`_stream_responses_request`) on a replayed engine, in lockstep: the events of each engine output come with it
(runs where vllm-mlx is installed; fails instead of skipping when REQUIRE_ENGINES names it).
"""

from __future__ import annotations

from typing import Any

import pytest
from installed import installed_engine

from contract.cases.catalog import case
from contract.cases.family import Sample
from contract.cases.model import Chunk
from fixtures import family


@pytest.fixture(scope="module")
def engine() -> Any:
    return installed_engine("vllm-mlx")


def _subject(engine: Any, case_id: str) -> tuple[Any, Sample]:
    fam = family("hermes")
    sample = fam.sample(case(case_id))
    assert isinstance(sample, Sample)
    return engine.factories["hermes"](fam), sample


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_batch_is_the_endpoints_response(engine: Any) -> None:
    parser, sample = _subject(engine, "reasoning.then_content_and_tool")
    response = parser.respond(sample.text, None, sample.context, sample.stop)
    assert (response["object"], response["status"], response["model"]) == ("response", "completed", "graded")
    assert [item["type"] for item in response["output"]] == ["reasoning", "message", "function_call"]
    call = response["output"][2]
    assert call["call_id"].startswith("call_") and call["name"] == "get_weather"


def test_a_cut_output_is_incomplete(engine: Any) -> None:
    parser, sample = _subject(engine, "tool.single")
    response = parser.respond(sample.text, None, sample.context, "length")
    assert (response["status"], response["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})


def test_stream_events_come_with_their_output(engine: Any) -> None:
    parser, sample = _subject(engine, "reasoning.then_content_and_tool")
    pieces = ["<think>", sample.text[len("<think>"):]]
    session = parser.open_response_stream(sample.context)
    steps = [session.feed(Chunk(piece)) for piece in pieces]
    end = session.finish(sample.stop)
    assert _types(steps[0])[:2] == ["response.created", "response.in_progress"]
    assert "response.reasoning_text.delta" in _types(steps[1])  # the reasoning, with the output that carried it
    assert "response.function_call_arguments.delta" not in _types(steps[1])  # calls come after the last output
    assert _types(end)[-1] == "response.completed"
    numbers = [e["sequence_number"] for step in [*steps, end] for e in step]
    assert numbers == list(range(1, len(numbers) + 1))
