"""Dynamo's adapter beyond the generic wiring: the frontend subprocess and what its failures look like.

Runs where Dynamo is installed (its grade session); skips elsewhere, fails with REQUIRE_ENGINES=dynamo.
"""

from __future__ import annotations

import importlib
import json
import os

import pytest

from contract.cases.catalog import case
from contract.streams.tokenizer import family_tokenizer, token_stream
from fixtures import family


def _serving():  # noqa: ANN202 - the module, once Dynamo imports
    try:
        importlib.import_module("dynamo.llm")
    except ImportError as exc:
        if "dynamo" in os.environ.get("REQUIRE_ENGINES", "").split(","):
            pytest.fail(f"dynamo must be installed here (REQUIRE_ENGINES): {exc}")
        pytest.skip(f"dynamo is not installed here: {exc}")
    return importlib.import_module("parsers.dynamo.serving")


def test_a_dead_frontend_is_a_clear_error_not_a_hang(tmp_path) -> None:  # noqa: ANN001
    serving = _serving()
    path = tmp_path / "tokenizer.json"
    family_tokenizer(family("hermes")).save(str(path))
    frontend = serving.Frontend([serving.ModelSpec("hermes", "hermes", None, str(path))])
    sample = family("hermes").sample(case("tool.single"))
    ids = token_stream(family_tokenizer(family("hermes")), sample.rendered).ids
    request = {"model": "hermes", "messages": [{"role": "user", "content": "hi"}],
               "tools": [t.openai() for t in sample.context.tools],
               "chat_template_kwargs": {"prompt_tail": "", "replay": frontend.replay([serving.Step(ids)], "stop")}}
    try:
        assert [c.name for c in frontend.chat(request).tool_calls] == ["get_weather"]
        # the model cards Dynamo writes under HOME stay in the run's own temp dir
        assert any((frontend.root / ".cache" / "dynamo").rglob("*"))
        frontend.process.kill()
        frontend.process.wait()
        with pytest.raises(serving.EngineError, match="exited"):
            frontend.chat(request)
    finally:
        frontend.close()
    assert not frontend.root.exists()


def test_a_responses_request_round_trips_with_the_calls_id(tmp_path) -> None:  # noqa: ANN001
    """The Responses API one shot and streamed (`Frontend.respond`, `.response_events`): the call the replay writes
    comes back as a function_call item whose call_id the stream's added item and its completed response share."""
    serving = _serving()
    adapter = importlib.import_module("parsers.dynamo.adapter")
    path = tmp_path / "tokenizer.json"
    family_tokenizer(family("hermes")).save(str(path))
    frontend = serving.Frontend([serving.ModelSpec("hermes", "hermes", None, str(path))])
    sample = family("hermes").sample(case("tool.single"))
    ids = token_stream(family_tokenizer(family("hermes")), sample.rendered).ids
    request = adapter.responses_json("hermes", sample.context, frontend.replay([serving.Step(ids)], "stop"))
    try:
        response = frontend.respond(request)
        events = frontend.response_events(request)
    finally:
        frontend.close()
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_weather", {"city": "Paris", "days": 3})]
    assert calls[0]["call_id"] and response["status"] == "completed"
    assert [events[0]["type"], events[-1]["type"]] == ["response.created", "response.completed"]
    added = [e["item"] for e in events if e["type"] == "response.output_item.added" and e["item"]["type"] == "function_call"]
    completed = [i for i in events[-1]["response"]["output"] if i["type"] == "function_call"]
    assert len(added) == len(completed) == 1 and added[0]["call_id"] == completed[0]["call_id"]
