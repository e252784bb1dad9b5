"""The matrix's view of Dynamo: each parser under test is one model of a `serving.Frontend` (started once
per grading process, registering a parser's model when the process first builds that parser), configured
as a worker registers it, graded over the frontend's OpenAI HTTP API.

The request a case implies is the one a client would send (tools, tool_choice, the thinking flags as
chat_template_kwargs, earlier messages); the prompt ends with the case's prompt tail. Batch replays
the sample's token ids one token per engine step and asks for a non-streaming completion. Streaming
replays the chunking's ids (a chunk cut inside tokens: its text encoded anew) one chunk per engine step,
but only at the finish: the frontend emits nothing for a step its parsers hold, so which step caused
which delta cannot be known without timing. Every streamed delta is therefore attributed to the
finish, and holdback is not measurable (`Engine.holdback_unmeasurable`). The Responses API (`/v1/responses`,
one shot and SSE) is asked the same way, with the replay under the same key, and hands back the response object
and the stream's events as the frontend sent them.
"""

from __future__ import annotations

import atexit
import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from dynamo._core import get_reasoning_parser_names, get_tool_parser_names
from tokenizers import Tokenizer

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
    choice_json,
    coverage,
    encode_markup,
    family_tokenizer,
    family_tokenizer_file,
    kept_in_content,
    messages,
    parallel_flag,
    responses_request,
    shape_of_schema,
    thinking_flags,
)

from .serving import Frontend, ModelSpec, Step

UNATTRIBUTABLE = ("Dynamo's frontend emits nothing for an engine step its parsers hold, so a delta cannot be "
                  "attributed to the chunk that caused it without timing; every streamed delta is taken at the finish")

# names bound to one implementation besides separator spellings (lib/parsers tool_calling/parsers.rs)
# minimax_m3_nom: parsed exactly as minimax_m3 on every MiniMax-M3 sample (graded side by side, 540 cells alike), and
# Dynamo's own tests treat it as an alias of minimax_m3
_TOOL_ALIASES = {"qwen25": "hermes", "nemotron_nano": "qwen3_coder", "minimax_m3_nom": "minimax_m3",
                 "minimax-m3-nom": "minimax_m3"}


def engine_tokenizer(family: Family) -> Tokenizer:
    """The family tokenizer exactly as the frontend loads it (its tokenizer.json)."""
    return Tokenizer.from_file(str(family_tokenizer_file(family)))


@cache
def _frontend() -> Frontend:
    frontend = Frontend()
    atexit.register(frontend.close)
    return frontend


def request_json(model: str, context: RequestContext, replay: str) -> dict[str, Any]:
    """The chat request a client would send for this case; `replay` tells the worker what to generate."""
    request: dict[str, Any] = {
        "model": model,
        "messages": messages(context),
        "chat_template_kwargs": {**thinking_flags(context), "prompt_tail": context.prompt_tail, "replay": replay},
    }
    if context.tools:
        request.update(tools=[t.openai() for t in context.tools], tool_choice=choice_json(context.tool_choice))
    return {**request, **parallel_flag(context)}


def responses_json(model: str, context: RequestContext, replay: str) -> dict[str, Any]:
    """The Responses API request a client would send for this case (no tools or tool_choice where it declares no
    tools, as the chat request; no `reasoning` option, which a client sets only to ask for summaries); `replay`
    tells the worker what to generate."""
    request = responses_request(context, model=model)
    if not context.tools:
        del request["tools"], request["tool_choice"]
    request["chat_template_kwargs"] = {**request["chat_template_kwargs"], "prompt_tail": context.prompt_tail,
                                       "replay": replay}
    return request


def _steps(chunks: Sequence[Chunk]) -> list[Step]:
    """One engine step per chunk: its ids, or a chunk cut inside tokens (char tier) as its text, which the worker
    encodes anew with the model's tokenizer (`serving.Step`)."""
    return [Step.of(c) for c in chunks]


@dataclass
class _Session:
    parser: DynamoParser
    context: RequestContext
    chunks: list[Chunk] = field(default_factory=list)
    replays_at_finish = True  # the whole request is sent at the finish: sessions finished together overlap in the server

    def feed(self, chunk: Chunk) -> Sequence[Any]:
        self.chunks.append(chunk)
        return ()

    def replay(self, stop: str) -> str:
        return _frontend().replay(_steps(self.chunks), stop)

    def finish(self, stop: str) -> Sequence[Delta]:
        return _frontend().stream(request_json(self.parser.name, self.context, self.replay(stop)))


class _ResponseSession(_Session):
    """A streamed Responses API request, sent whole at the finish as the chat stream is: every event is taken there."""

    def finish(self, stop: str) -> Sequence[dict[str, Any]]:  # type: ignore[override]
        return _frontend().response_events(responses_json(self.parser.name, self.context, self.replay(stop)))


@dataclass(frozen=True)
class DynamoParser:
    name: str
    family: Family
    pipeline: Pipeline

    def __post_init__(self) -> None:
        """The parser's model is registered when the parser is built, not inside its first timed call: the
        frontend loads the model's tokenizer, which would read as that parser's slowness."""
        _frontend().serve(ModelSpec(self.name, self.pipeline.tool, self.pipeline.reasoning,
                                    str(family_tokenizer_file(self.family))))

    def forced_text(self, sample: Sample) -> ForcedText:
        """What a forced tool_choice has the model write: the JSON the frontend's guided decoding asks the worker
        for, or the family's markup (a native structural tag, or no constraint)."""
        guided = _frontend().guided_decoding(lambda key: request_json(self.name, sample.context, key)) or {}
        return shape_of_schema(guided["json"]) if guided.get("json") is not None else ForcedText.NATIVE

    def one_shot(self, text: str, token_ids: tuple[int, ...] | None, stop: str) -> str:
        """The replay of a one-shot request: the sample's ids (its text encoded where it has none), a token a step."""
        ids = token_ids if token_ids is not None else tuple(encode_markup(family_tokenizer(self.family), text))
        return _frontend().replay([Step((i,)) for i in ids], stop)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return _frontend().chat(request_json(self.name, context, self.one_shot(text, token_ids, stop)))

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self, context)

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        return _frontend().respond(responses_json(self.name, context, self.one_shot(text, token_ids, stop)))

    def open_response_stream(self, context: RequestContext) -> _ResponseSession:
        return _ResponseSession(self, context)


def _implementation(kind: str, name: str) -> str:
    if kind == "tool":
        name = _TOOL_ALIASES.get(name, name)
    return f"{kind}:{name.replace('-', '').replace('_', '')}"


def _registered() -> dict[str, Mapping[str, object]]:
    # interned so that spellings of one implementation are the same object (`coverage` compares identity)
    impls: dict[str, str] = {}
    return {kind: {n: impls.setdefault(_implementation(kind, n), _implementation(kind, n)) for n in names}
            for kind, names in (("tool", get_tool_parser_names()), ("reasoning", get_reasoning_parser_names()))}


def load_engine(name: str, pipelines: Mapping[str, Pipeline]) -> Engine:
    factories = {
        parser: (lambda family, parser=parser, pipeline=pipeline: DynamoParser(parser, family, pipeline))
        for parser, pipeline in pipelines.items()
    }
    return Engine(name, importlib.metadata.version("ai-dynamo-runtime"), factories, coverage(_registered(), pipelines),
                  kept_in_content(pipelines), distribution="ai-dynamo-runtime", holdback_unmeasurable=UNATTRIBUTABLE)
