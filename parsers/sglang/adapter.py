"""The matrix's view of SGLang: each parser under test is a `serving.Server` configured as a server
would be started (`--tool-call-parser`, `--reasoning-parser`), with the family's tokenizer.

The request a case implies is the one a client would send. The server forces reasoning where the template
prefills the opener (here: the prompt ends with the family's reasoning opener and thinking is on) or where
the request asks for it (`serving.Server.requested_reasoning`, from the request's thinking flags). A response-template parser (`response_template`, `beam`) reads the family's
`response_template` from the tokenizer, as the model's tokenizer config carries it, and parses after the
prompt the chat template renders (the server's `_response_parser_prefix`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, LegacyStructuralTagResponseFormat
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.parser.response_template import (
    ResponseTemplateReasoningDetector,
    ResponseTemplateToolDetector,
)

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
    TaggedCalls,
    Written,
    chat_request,
    coverage,
    hf_template_tokenizer,
    hf_tokenizer,
    kept_in_content,
    shape_of_schema,
    written_under,
)

from .serving import Server, Stream

engine_tokenizer = hf_tokenizer  # the tokenizer the server holds
template_tokenizer = hf_template_tokenizer  # ... for response-template parsers: with the model's response_template


def template_driven(pipeline: Pipeline) -> bool:
    """Whether the pipeline's detectors parse by the tokenizer's response_template (SGLang's own classes)."""
    tool = FunctionCallParser.ToolCallParserEnum.get(pipeline.tool) if pipeline.tool else None
    reasoning = ReasoningParser.DetectorMap.get(pipeline.reasoning) if pipeline.reasoning else None
    return bool((tool and issubclass(tool, ResponseTemplateToolDetector))
                or (reasoning and issubclass(reasoning, ResponseTemplateReasoningDetector)))


def request_json(context: RequestContext) -> dict[str, Any]:
    """The chat request a client would send for this case, as JSON (no tools: `tool_choice` "none")."""
    return chat_request(context, choice_without_tools="none")


@dataclass(frozen=True)
class SglangParser:
    family: Family
    pipeline: Pipeline

    @cached_property
    def server(self) -> Server:
        tokenizer = template_tokenizer if template_driven(self.pipeline) else engine_tokenizer
        return Server(self.pipeline.tool, self.pipeline.reasoning, tokenizer(self.family))

    def template_forces(self, context: RequestContext) -> bool:
        return self.family.reasoning is not None and self.family.reasoning.prefilled(context)

    def prompt(self, context: RequestContext) -> str:
        """The rendered prompt's end: the chat template's, where the family declares a response template, then
        the case's prompt tail."""
        return self.family.prompt_end(context)

    def request(self, context: RequestContext) -> ChatCompletionRequest:
        """The client's request as the server holds it after rendering the prompt."""
        return self.server.render(ChatCompletionRequest(**request_json(context)), self.prompt(context))

    def forced_text(self, sample: Sample) -> Written:
        """What the server's constraint has the model write under a forced choice: the JSON its schema asks for,
        a legacy structural tag's literal around each call's arguments, or the family's markup (a model-native
        tag, GLM-4.7's grammar, or a detector that parses required natively and is not constrained)."""
        request = self.request(sample.context)
        kind, value = self.server.constraint(request) or (None, None)
        if kind == "json_schema":
            return shape_of_schema(value)
        if isinstance(value, LegacyStructuralTagResponseFormat):
            return TaggedCalls(tuple((tool.function.name, tag.begin, tag.end)
                                     for tool, tag in zip(request.tools or (), value.structures, strict=True)))
        if kind == "structural_tag":  # with a reasoning parser the grammar waits for the reasoning's end
            return written_under(value.model_dump(mode="json", by_alias=True), sample, "SGLang",
                                 after_reasoning=self.pipeline.reasoning is not None)
        return ForcedText.NATIVE

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.server.parse(self.request(context), self.template_forces(context), text, stop)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.server.open_stream(self.request(context), self.template_forces(context)))


@dataclass(frozen=True)
class _Session:
    stream: Stream

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.stream.feed(chunk.text)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(stop)


def _registered() -> dict[str, Mapping[str, object]]:
    return {"tool": dict(FunctionCallParser.ToolCallParserEnum), "reasoning": dict(ReasoningParser.DetectorMap)}


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, pipeline=pipeline: SglangParser(family, pipeline)) for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("sglang"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="sglang")
