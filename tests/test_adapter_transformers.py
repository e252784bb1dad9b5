"""transformers' adapter drives `transformers serve`'s Responses handler itself (`ResponseHandler._non_streaming`,
`._streaming`) on a replayed generation: the events of each step come with that step, the ends are the handler's
(runs where transformers is installed; fails instead of skipping when REQUIRE_ENGINES names it).
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
    return installed_engine("transformers")


def _subject(engine: Any, case_id: str) -> tuple[Any, Sample]:
    fam = family("hermes")
    sample = fam.sample(case(case_id))
    assert isinstance(sample, Sample)
    return engine.factories["qwen3"](fam), sample


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_batch_is_the_handlers_response(engine: Any) -> None:
    parser, sample = _subject(engine, "tool.single")
    response = parser.respond(sample.text, None, sample.context, sample.stop)
    assert (response["object"], response["status"], response["model"]) == ("response", "completed", "graded")
    kinds = [item["type"] for item in response["output"]]
    assert kinds == ["message", "function_call"]  # the handler always writes a message item
    call = response["output"][1]
    assert call["call_id"] == call["id"] and call["call_id"].endswith("_tool_call_0")
    assert (call["name"], call["arguments"]) == ("get_weather", '{"city": "Paris", "days": 3}')


def test_stream_events_come_with_their_step(engine: Any) -> None:
    parser, sample = _subject(engine, "tool.single")
    ids = parser.output_ids(sample.text, None)
    session = parser.open_response_stream(sample.context)
    steps = [session.feed(Chunk(parser.server.tokenizer.decode([i]), (i,))) for i in ids]
    end = session.finish(sample.stop)
    assert _types(steps[0])[:2] == ["response.created", "response.in_progress"]
    added = [n for n, step in enumerate(steps) if "response.output_item.added" in _types(step)]
    assert added == [len(ids) - 1]  # the call, queued when its closing marker's token is decoded
    assert _types(end)[-1] == "response.completed"
    assert [e["sequence_number"] for step in [*steps, end] for e in step] == list(range(sum(map(len, steps)) + len(end)))


def test_text_without_ids_goes_to_the_response_parser(engine: Any) -> None:
    parser, sample = _subject(engine, "tool.single")
    session = parser.open_response_stream(sample.context)
    events = [e for char in sample.text for e in session.feed(Chunk(char, None))] + list(session.finish(sample.stop))
    final = events[-1]["response"]["output"]
    assert [item["type"] for item in final] == ["message", "function_call"]
    assert final[1]["arguments"] == '{"city": "Paris", "days": 3}'
