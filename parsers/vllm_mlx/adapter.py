"""The matrix's view of vllm-mlx: each parser under test is a `serving.Server` configured as
`vllm-mlx serve` would be started, with the family's tokenizer as the engine's HF tokenizer.

The request a case implies is the one a client would send; the chat template's rendered prompt ends
with the case's prompt tail (e.g. a prefilled `<think>`), which the server probes. Token-tier chunks
reach the server as mlx-lm's detokenizer decodes their ids; char-tier chunks (no ids) as their text.
The same server answers on the Responses API (`responses.py`), asked the same conversation.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from transformers import PreTrainedTokenizerFast
from vllm_mlx import reasoning as mlx_reasoning
from vllm_mlx.tool_parsers import ToolParserManager

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
    family_tokenizer,
    kept_in_content,
    responses_request,
)

from . import responses
from .serving import Server, Stream

PROMPT = "<|user|>\nPlease help.\n<|assistant|>\n"  # the rendered prompt, before the case's tail


@cache
def engine_tokenizer(family: Family) -> Any:
    """The family's tokenizer as the HF fast tokenizer mlx-lm wraps. mlx-lm's detokenizer maps the whole
    vocabulary for every request (0.2 s a time on a real 151k vocabulary): the dict is built once here."""
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=family_tokenizer(family))
    vocab = tokenizer.get_vocab()
    tokenizer.get_vocab = lambda: dict(vocab)
    return tokenizer


def request_json(context: RequestContext) -> dict[str, Any]:
    """The chat request a client would send for this case, as JSON."""
    return chat_request(context)


def prompt(context: RequestContext) -> str:
    return PROMPT + context.prompt_tail


@dataclass(frozen=True)
class _Session:
    stream: Stream[Delta]

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.stream.feed(chunk.text, chunk.token_ids)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(stop)


@dataclass(frozen=True)
class _ResponseSession:
    stream: responses.ResponseStream

    def feed(self, chunk: Chunk) -> list[dict[str, Any]]:
        return self.stream.feed(chunk.text, chunk.token_ids)

    def finish(self, stop: str) -> list[dict[str, Any]]:
        return self.stream.finish(stop)


@dataclass(frozen=True)
class VllmMlxParser:
    family: Family
    pipeline: Pipeline

    @cached_property
    def server(self) -> Server:
        return Server(self.pipeline.tool, self.pipeline.reasoning, engine_tokenizer(self.family))

    def output_text(self, text: str, token_ids: tuple[int, ...] | None) -> str:
        """What the engine's detokenizer makes of the generated ids (the text itself without ids)."""
        return text if token_ids is None else self.server.decoded(token_ids)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.server.parse(request_json(context), prompt(context), self.output_text(text, token_ids), stop)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.server.open_stream(request_json(context), prompt(context)))

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        """`/v1/responses` without streaming."""
        return responses.respond(self.server, responses_request(context), prompt(context),
                                 self.output_text(text, token_ids), stop)

    def open_response_stream(self, context: RequestContext) -> _ResponseSession:
        return _ResponseSession(responses.ResponseStream(self.server, responses_request(context), prompt(context)))


def _registered() -> dict[str, Mapping[str, object]]:
    return {
        "tool": {n: ToolParserManager.get_tool_parser(n) for n in ToolParserManager.list_registered()},
        "reasoning": {n: mlx_reasoning.get_parser(n) for n in mlx_reasoning.list_parsers()},
    }


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, pipeline=pipeline: VllmMlxParser(family, pipeline))
        for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("vllm-mlx"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="vllm-mlx")
