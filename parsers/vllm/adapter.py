"""The matrix's view of vLLM: each parser under test is a `serving.Server` configured as a server
would be started, with the family's tokenizer (an HF fast tokenizer, as vLLM's renderer holds it).

The request a case implies is the one a client would send; its prompt ids end with the case's
prompt tail (e.g. a prefilled opener). A template-driven parser (`hf`, `beam`: vLLM's
`ResponseTemplateParser`) reads the family's `response_template` from the tokenizer, as the model's
tokenizer config carries it, and parses after the prompt the chat template renders before it.
gpt-oss goes through vLLM's Harmony parser, which reads o200k_harmony ids: those come from
`parsers.harmony_tokens`, released as soon as they are final.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.parser.harmony_utils import get_encoding
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.parser.response_template import response_template_parser_cls
from vllm.reasoning import ReasoningParserManager
from vllm.tokenizers.hf import get_cached_tokenizer
from vllm.tool_parsers import ToolParserManager

from parsers import (
    Chunk,
    Delta,
    Engine,
    Family,
    ForcedText,
    HarmonyTokens,
    Message,
    Pipeline,
    RequestContext,
    Sample,
    Written,
    chat_request,
    coverage,
    encode_markup,
    family_tokenizer,
    hf_template_tokenizer,
    hf_tokenizer,
    kept_in_content,
    responses_request,
    shape_of_schema,
    written_under,
)

from . import responses
from .serving import HarmonyTokenizer, Prepared, ServedModel, Server, Stream


@cache
def engine_tokenizer(family: Family, with_template: bool = False) -> Any:
    """The family's offline tokenizer as the HF fast tokenizer vLLM's renderer would hold (`with_template`: with
    the `response_template` its model's tokenizer config declares)."""
    return get_cached_tokenizer(hf_template_tokenizer(family) if with_template else hf_tokenizer(family))


def request_json(context: RequestContext) -> dict[str, Any]:
    """The chat request a client would send for this case, as JSON (vLLM's request needs no model name)."""
    return chat_request(context, model=None)


class _FamilyIds:
    """The chunk's own ids: the family tokenizer is the model's tokenizer."""

    def push(self, chunk: Chunk) -> list[int]:
        return list(chunk.token_ids or ())

    def finish(self) -> list[int]:
        return []


@dataclass(frozen=True)
class _Session:
    stream: Stream
    ids: Any  # _FamilyIds or HarmonyTokens: the ids the engine receives per chunk

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.stream.feed(chunk.text, self.ids.push(chunk), text_without_ids=chunk.token_ids is None)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(stop, self.ids.finish())


@dataclass
class _ResponseSession:
    stream: responses.ResponseStream
    ids: Any
    started: bool = False

    def _start(self) -> list[dict[str, Any]]:
        events = [] if self.started else self.stream.start()
        self.started = True
        return events

    def feed(self, chunk: Chunk) -> list[dict[str, Any]]:
        return [*self._start(), *self.stream.step(chunk.text, self.ids.push(chunk), None)]

    def finish(self, stop: str) -> list[dict[str, Any]]:
        return [*self._start(), *self.stream.step("", self.ids.finish(), stop)]


@dataclass(frozen=True)
class VllmParser:
    family: Family
    pipeline: Pipeline

    @cached_property
    def server(self) -> Server:
        model = ServedModel(ARCHITECTURES[self.pipeline.tool]) if self.pipeline.tool in ARCHITECTURES else None
        return Server(self.pipeline.tool, self.pipeline.reasoning, engine_tokenizer(self.family), model=model)

    def prompt_ids(self, context: RequestContext) -> list[int]:
        return encode_markup(family_tokenizer(self.family), context.prompt_tail)

    def prepare(self, context: RequestContext) -> Prepared:
        return self.server.prepare(ChatCompletionRequest(**request_json(context)), self.prompt_ids(context))

    def forced_text(self, sample: Sample) -> Written:
        """What a forced tool_choice has the model write: the JSON `adjust_request` constrained the output to, the
        text its structural tag admits (`parsers.structural_tags`), or the family's markup where nothing constrains
        it."""
        outputs = self.prepare(sample.context).request.structured_outputs
        if getattr(outputs, "json", None) is not None:
            return shape_of_schema(outputs.json)
        if getattr(outputs, "structural_tag", None) is not None:
            return written_under(outputs.structural_tag, sample, "vLLM", after_reasoning=True)
        return ForcedText.NATIVE

    def stream_ids(self) -> Any:
        return _FamilyIds()

    def output_ids(self, text: str, token_ids: tuple[int, ...] | None) -> list[int]:
        return list(token_ids) if token_ids is not None else encode_markup(family_tokenizer(self.family), text)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.server.parse(self.prepare(context), text, self.output_ids(text, token_ids), stop)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.server.open_stream(self.prepare(context)), self.stream_ids())

    def prepare_responses(self, context: RequestContext) -> Prepared:
        request = ResponsesRequest(**responses_request(context, model=None))
        return self.server.prepare(request, self.prompt_ids(context))

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        return responses.respond(self.server, self.prepare_responses(context), text, self.output_ids(text, token_ids),
                                 stop)

    def open_response_stream(self, context: RequestContext) -> _ResponseSession:
        return _ResponseSession(responses.ResponseStream(self.server, self.prepare_responses(context)), self.stream_ids())


@dataclass(frozen=True)
class VllmHarmonyParser(VllmParser):
    """gpt-oss: the server builds `HarmonyParser` (model type gpt_oss), which reads o200k_harmony ids."""

    @cached_property
    def server(self) -> Server:
        return Server(self.pipeline.tool, self.pipeline.reasoning, HarmonyTokenizer(get_encoding()), harmony=True)

    def stream_ids(self) -> Any:
        return HarmonyTokens(get_encoding(), self.family)

    def output_ids(self, text: str, token_ids: tuple[int, ...] | None) -> list[int]:
        ids = HarmonyTokens(get_encoding(), self.family)
        return [*ids.push(Chunk(text, token_ids)), *ids.finish()]

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        return responses.harmony_respond(self.server, self.prepare_responses(context), self.output_ids(text, token_ids),
                                         stop)

    def open_response_stream(self, context: RequestContext) -> _ResponseSession:
        stream = responses.HarmonyResponseStream(self.server, self.prepare_responses(context))
        return _ResponseSession(stream, self.stream_ids())


@dataclass(frozen=True)
class VllmTemplateParser(VllmParser):
    """`hf` / `beam`: vLLM's `ResponseTemplateParser`, which reads the tokenizer's `response_template` and
    parses the output after the rendered prompt (its start anchor, then the case's prompt tail)."""

    @cached_property
    def server(self) -> Server:
        return Server(self.pipeline.tool, self.pipeline.reasoning, engine_tokenizer(self.family, with_template=True))

    def prompt_ids(self, context: RequestContext) -> list[int]:
        return encode_markup(family_tokenizer(self.family), self.family.prompt_end(context))


# the architecture in the config.json of the models a tool parser reads one from (Cohere's, for its structural
# tags: Command A's and, for the Command A Plus format, the architecture whose tags include its `<|START_TEXT|>`)
ARCHITECTURES = {"cohere_command3": "Cohere2ForCausalLM", "cohere_command4": "Cohere2MoeForCausalLM"}

# families whose server path is vLLM's Harmony parser (it switches on the model type, not a parser name)
HARMONY_FAMILIES = frozenset({"harmony"})


def _implementation(lookup: Callable[[str], object], name: str) -> object:
    """The class a name is bound to; a name whose module fails to import stands for itself."""
    try:
        return lookup(name)
    except Exception as exc:  # noqa: BLE001 - any import failure of one parser module
        return f"{name}: {type(exc).__name__}"


def _registered() -> dict[str, Mapping[str, object]]:
    tool, reasoning = ToolParserManager, ReasoningParserManager
    return {
        "tool": {n: _implementation(tool.get_tool_parser, n) for n in tool.list_registered()},
        "reasoning": {n: _implementation(reasoning.get_reasoning_parser, n) for n in reasoning.list_registered()},
    }


def template_driven(pipeline: Pipeline) -> bool:
    """Whether the server composes the pipeline's parsers into a `ResponseTemplateParser` (vLLM's own test)."""
    classes = [ToolParserManager.get_tool_parser(pipeline.tool)] if pipeline.tool else []
    classes += [ReasoningParserManager.get_reasoning_parser(pipeline.reasoning)] if pipeline.reasoning else []
    return any(response_template_parser_cls(c) is not None for c in classes)


def _parser_class(pipeline: Pipeline) -> type[VllmParser]:
    if pipeline.family in HARMONY_FAMILIES:
        return VllmHarmonyParser
    return VllmTemplateParser if template_driven(pipeline) else VllmParser


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, pipeline=pipeline: _parser_class(pipeline)(family, pipeline))
        for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("vllm"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="vllm")
