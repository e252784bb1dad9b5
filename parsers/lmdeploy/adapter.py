"""The matrix's view of lmdeploy: each parser under test is a `serving.Server` configured as a server would
be started, with the family's tokenizer as the HF tokenizer lmdeploy's engine holds.

The request a case implies is the JSON a client would send (tools, tool_choice, the thinking flag as
`chat_template_kwargs`, earlier messages); the prompt ids end with the case's prompt tail (lmdeploy's
detokenizer starts after them). Each chunk's ids are one engine step; the char tier's text comes without ids.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from lmdeploy.serve.parsers.reasoning_parser import ReasoningParserManager
from lmdeploy.serve.parsers.tool_parser import ToolParserManager

from parsers import (
    Chunk,
    Delta,
    Engine,
    Family,
    ForcedText,
    Message,
    Pipeline,
    RequestContext,
    Sample,
    Written,
    chat_request,
    choice_json,
    coverage,
    encode_markup,
    family_tokenizer,
    kept_in_content,
    written_under,
)

from .serving import MODEL, Server, Stream, hf_tokenizer


@cache
def engine_tokenizer(family: Family) -> Any:
    """The family's offline tokenizer as the HF tokenizer lmdeploy's engine holds."""
    return hf_tokenizer(family_tokenizer(family))


def request_json(context: RequestContext) -> dict[str, Any]:
    """The chat request a client would send for this case, as JSON (its `tool_choice` even without tools)."""
    return chat_request(context, model=MODEL, choice_without_tools=choice_json(context.tool_choice))


@dataclass(frozen=True)
class _Session:
    stream: Stream

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        if chunk.token_ids is None:
            return self.stream.feed_text(chunk.text)
        return self.stream.feed(chunk.token_ids)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(stop)


@dataclass(frozen=True)
class LmdeployParser:
    family: Family
    pipeline: Pipeline

    @cached_property
    def server(self) -> Server:
        return Server(self.pipeline.tool, self.pipeline.reasoning, engine_tokenizer(self.family))

    def prompt_ids(self, context: RequestContext) -> list[int]:
        return encode_markup(family_tokenizer(self.family), context.prompt_tail)

    def output_ids(self, text: str, token_ids: tuple[int, ...] | None) -> list[int]:
        return list(token_ids) if token_ids is not None else encode_markup(family_tokenizer(self.family), text)

    def forced_text(self, sample: Sample) -> Written:
        """A named function is not constrained (the server only drops calls to other names): the family's markup.
        "required" is constrained to the structural tag xgrammar builds for the tool parser (the request's
        `response_format`), which decides the text (`parsers.structural_tags`)."""
        tag = self.server.prepare(request_json(sample.context)).parser.request.response_format
        return ForcedText.NATIVE if tag is None else written_under(tag, sample, "lmdeploy")

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.server.parse(request_json(context), self.prompt_ids(context), self.output_ids(text, token_ids),
                                 stop)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.server.open_stream(request_json(context), self.prompt_ids(context)))


def _registered() -> dict[str, Mapping[str, object]]:
    # the registry's own dict: mmengine's `get` reads a dot as a scope separator, so `get("deepseek-v3.2")`
    # is None although the name is registered (with `deepseek-v32`, to the same class)
    return {"tool": dict(ToolParserManager.module_dict), "reasoning": dict(ReasoningParserManager.module_dict)}


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, pipeline=pipeline: LmdeployParser(family, pipeline))
        for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("lmdeploy"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="lmdeploy")
