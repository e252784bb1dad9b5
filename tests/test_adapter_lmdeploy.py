"""lmdeploy's adapter replays what its server decodes: the request's skip_special_tokens after the tool
parser's `adjust_request`, applied by lmdeploy's own incremental detokenizer (runs where lmdeploy is installed;
fails instead of skipping when REQUIRE_ENGINES names it).
"""

from __future__ import annotations

import importlib

import pytest
from installed import installed_engine

from contract.cases.catalog import case
from contract.cases.family import Sample
from contract.streams.tokenizer import encode_markup, family_tokenizer
from fixtures import family


@pytest.fixture(scope="module")
def adapter() -> object:
    installed_engine("lmdeploy")
    return importlib.import_module("parsers.lmdeploy.adapter")


def _prepared(adapter: object, parser: str) -> tuple[object, object]:
    pipeline = importlib.import_module("parsers.lmdeploy").PIPELINES[parser]
    fam = family(pipeline.family)
    sample = fam.sample(case("tool.single"))
    assert isinstance(sample, Sample)
    under_test = adapter.LmdeployParser(fam, pipeline)
    return under_test, under_test.server.prepare(adapter.request_json(sample.context))


@pytest.mark.parametrize(("parser", "skip"), [("kimi_k2", False), ("glm47", True), ("qwen3", True)])
def test_adjust_request_decides_skip_special_tokens(adapter: object, parser: str, skip: bool) -> None:
    _, prepared = _prepared(adapter, parser)
    assert prepared.skip_special_tokens is skip


@pytest.mark.parametrize(("parser", "marker", "kept"), [("kimi_k2", "<|tool_calls_section_begin|>", True),
                                                        ("llama3", "<|python_tag|>", False)])
def test_special_markers_vanish_only_where_the_server_skips_them(
        adapter: object, parser: str, marker: str, kept: bool) -> None:
    under_test, prepared = _prepared(adapter, parser)
    ids = encode_markup(family_tokenizer(under_test.family), f"Hi{marker}there")
    text = "".join(under_test.server.detokenizer(prepared, []).step([i]) for i in ids)
    assert text == (f"Hi{marker}there" if kept else "Hithere")


def test_char_tier_text_drops_a_split_special_marker_whole(adapter: object) -> None:
    serving = importlib.import_module("parsers.lmdeploy.serving")
    text = serving.TextWithoutIds(("<tool_call>",))
    assert [text.push("a<tool_"), text.push("call>b<to"), text.flush()] == ["a", "b", "<to"]
