"""The matrix's view of `transformers serve`: each parser under test is a `serving.Server` for a model of
the pipeline's model type, with the family's tokenizer as the HF fast tokenizer the server loads.

The prompt is what the chat template would end with: the family's (`Family.response_template.prompt`, ending
with the assistant turn's anchor, the response template's `start_anchor` where the parser starts reading) and
the case's prompt tail (a prefilled reasoning opener, or a closed empty block when thinking is off), encoded
with the family tokenizer. The template itself is the server's own fallback for the model type.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS

from parsers import (
    Chunk,
    Delta,
    Engine,
    Family,
    Message,
    Pipeline,
    RequestContext,
    chat_request,
    coverage,
    encode_markup,
    family_tokenizer,
    hf_tokenizer,
    kept_in_content,
    responses_request,
)

from . import responses
from .serving import Server, Stream

engine_tokenizer = hf_tokenizer  # the tokenizer the server holds


def request_json(context: RequestContext) -> dict[str, Any]:
    """The chat request a client would send for this case, as JSON (the templates read `enable_thinking`)."""
    flags = {} if context.thinking is None else {"enable_thinking": context.thinking}
    return {**chat_request(context), "chat_template_kwargs": flags}


@dataclass(frozen=True)
class TransformersParser:
    family: Family
    pipeline: Pipeline

    @cached_property
    def server(self) -> Server:
        assert self.pipeline.tool is not None
        return Server(self.pipeline.tool, engine_tokenizer(self.family))

    def prompt_ids(self, context: RequestContext) -> list[int]:
        assert self.family.response_template is not None, f"family {self.family.name!r} declares no response template"
        return encode_markup(family_tokenizer(self.family), self.family.prompt_end(context))

    def output_ids(self, text: str, token_ids: tuple[int, ...] | None) -> list[int]:
        return list(token_ids) if token_ids is not None else encode_markup(family_tokenizer(self.family), text)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.server.parse(request_json(context), self.prompt_ids(context), self.output_ids(text, token_ids),
                                 stop)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.server.open_stream(request_json(context), self.prompt_ids(context)))

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        """`/v1/responses` without streaming (the server reads no finish reason: `stop` changes nothing)."""
        return responses.respond(self.server, responses_request(context), self.prompt_ids(context),
                                 self.output_ids(text, token_ids))

    def open_response_stream(self, context: RequestContext) -> _ResponseSession:
        return _ResponseSession(responses.ResponseStream(self.server, responses_request(context),
                                                         self.prompt_ids(context)))


@dataclass(frozen=True)
class _Session:
    stream: Stream

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        if chunk.token_ids is None:
            return self.stream.feed_text(chunk.text)
        return self.stream.feed(list(chunk.token_ids))

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(stop)


@dataclass(frozen=True)
class _ResponseSession:
    stream: responses.ResponseStream

    def feed(self, chunk: Chunk) -> list[dict[str, Any]]:
        if chunk.token_ids is None:
            return self.stream.feed_text(chunk.text)
        return self.stream.feed(chunk.token_ids)

    def finish(self, stop: str) -> list[dict[str, Any]]:
        return self.stream.finish()


def _registered() -> dict[str, Mapping[str, object]]:
    """Every model type `transformers serve` has a built-in response template for (one template parses
    reasoning and tool calls alike, so each is listed under both kinds; types sharing one are aliases)."""
    templates = {name: template for names, template in _RESPONSE_TEMPLATE_FALLBACKS.items() for name in names}
    return {"tool": templates, "reasoning": templates}


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, pipeline=pipeline: TransformersParser(family, pipeline))
        for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("transformers"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="transformers")
