"""Dynamo's adapter beyond the generic wiring: the frontend subprocess and what its failures look like.

Runs where Dynamo is installed (its grade session); skips elsewhere, fails with REQUIRE_ENGINES=dynamo.
"""

from __future__ import annotations

import importlib
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
