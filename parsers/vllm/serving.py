"""vLLM's chat serving path (`OpenAIServingChat`), for one server configuration.

Per request the server builds its parser class once (`ParserManager.get_parser`), renders the
prompt, lets a parser instance `adjust_request`, then per choice:
- batch: a fresh parser, `set_prompt_token_ids`, `parse(text, request, model_output_token_ids=…)`,
  `assemble_chat_message_fields(...)` and `resolve_finish_reason(...)`;
- streaming: `ChatStreamProcessor(...).step(delta_text, delta_token_ids, finish_reason,
  prompt_token_ids)` once per engine output.
The engine's finish reason arrives on a last, empty step (as when generation ends on a stop token
whose text is not shown), so every delta lines up with the step that caused it.

Framework-free on purpose: it imports vLLM and the project's message types only, so a standalone
reproduction (`nox -s repro`) carries this very code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.entrypoints.serve.utils.tool_calls_utils import resolve_finish_reason
from vllm.parser.parser_manager import ParserManager

from parsers import Delta, Message, ToolCall, ToolCallDelta


@dataclass(frozen=True)
class Prepared:
    """One request after the server's rendering step: adjusted request, template kwargs, prompt ids."""

    request: ChatCompletionRequest | ResponsesRequest  # a Responses request is rendered and adjusted alike
    template_kwargs: dict[str, Any]
    prompt_token_ids: list[int]


def delta(message: Any) -> Delta:
    """A `DeltaMessage` as the project's Delta."""
    calls = tuple(
        ToolCallDelta(
            index=c.index,
            id=c.id,
            type=c.type,
            name=c.function.name if c.function else None,
            arguments=c.function.arguments if c.function else None,
        )
        for c in message.tool_calls or ()
    )
    return Delta(content=message.content, reasoning=message.reasoning, tool_calls=calls)


@dataclass(frozen=True)
class ServedModel:
    """What of the server's `ModelConfig` a parser reads, as the server fills it from the model's config.json:
    Cohere's parser builds its structural tag from the architecture (a real `ModelConfig` loads the model's classes,
    which a CPU machine without the weights cannot)."""

    architecture: str
    hf_config: Any = None  # no model type: tool-call ids stay random, as without a config


@dataclass(frozen=True)
class Server:
    """A server started with `--tool-call-parser` / `--reasoning-parser` (or gpt-oss's Harmony parser)."""

    tool: str | None
    reasoning: str | None
    tokenizer: Any
    harmony: bool = False  # the model type is gpt_oss: vLLM's HarmonyParser, on o200k_harmony ids
    model: ServedModel | None = None  # handed to the parser as its model_config where the parser reads one

    @cached_property
    def parser_cls(self) -> Any:
        return ParserManager.get_parser(
            tool_parser_name=self.tool,
            reasoning_parser_name=self.reasoning,
            enable_auto_tools=True,
            tokenizer=self.tokenizer,
            **({"is_harmony": True} if self.harmony else {}),
        )

    def new_parser(self, prepared: Prepared) -> Any:
        extra = {"model_config": self.model} if self.model is not None else {}
        return self.parser_cls(self.tokenizer, prepared.request.tools, chat_template_kwargs=prepared.template_kwargs,
                               **extra)

    def prepare(self, request: ChatCompletionRequest | ResponsesRequest, prompt_token_ids: list[int]) -> Prepared:
        """What the server does before generation: template kwargs, prompt ids, `adjust_request`."""
        template_kwargs = request.build_chat_params(None, "auto").chat_template_kwargs
        prepared = Prepared(request, template_kwargs, prompt_token_ids)
        adjuster = self.new_parser(prepared)
        adjuster.set_prompt_token_ids(prompt_token_ids)
        prepared = dataclasses.replace(prepared, request=adjuster.adjust_request(request))
        return dataclasses.replace(prepared, prompt_token_ids=[]) if self.harmony else prepared  # HarmonyParser ignores them

    def parse(self, prepared: Prepared, text: str, output_ids: list[int], stop: str) -> Message:
        """A non-streaming response whose generated text is `text` (token ids `output_ids`), ended by `stop`."""
        parser = self.new_parser(prepared)
        parser.set_prompt_token_ids(prepared.prompt_token_ids)
        reasoning, content, calls = parser.parse(
            text, prepared.request, enable_auto_tools=True, model_output_token_ids=output_ids
        )
        fields = assemble_chat_message_fields(
            prepared.request, reasoning, content, calls, enable_auto_tools=True, parser_cls=self.parser_cls
        )
        tool_calls = tuple(
            ToolCall(name=c.function.name, arguments=c.function.arguments, id=c.id or "")
            for c in fields.tool_calls or ()
        )
        return Message(
            content=fields.content or "",
            reasoning=fields.reasoning or "",
            tool_calls=tool_calls,
            finish_reason=resolve_finish_reason(stop, prepared.request, bool(tool_calls)),
        )

    def open_stream(self, prepared: Prepared) -> Stream:
        return Stream(self, prepared)


class Stream:
    """One streamed response: `feed` per engine output, `finish` on the last, empty one."""

    def __init__(self, server: Server, prepared: Prepared) -> None:
        self.prepared = prepared
        self.processor = ChatStreamProcessor(
            prepared.request, server.new_parser(prepared), enable_auto_tools=True, parser_cls=server.parser_cls
        )

    def _step(self, text: str, token_ids: Sequence[int], finish_reason: str | None) -> list[Delta]:
        step = self.processor.step(text, list(token_ids), finish_reason, self.prepared.prompt_token_ids)
        deltas = [delta(step.delta)] if step.delta is not None else []
        if step.finish_reason is not None:
            deltas.append(Delta(finish_reason=step.finish_reason))
        return deltas

    def feed(self, text: str, token_ids: Sequence[int], text_without_ids: bool = False) -> list[Delta]:
        deltas = self._step(text, token_ids, None)
        if text_without_ids and text:
            # char tier: text without ids. The server counts generated tokens by id and skips the final
            # flush of a stream that had none; a real stream always has them, so count this text as output.
            self.processor.num_output_tokens += 1
        return deltas

    def finish(self, stop: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        return self._step("", token_ids, stop)


class HarmonyTokenizer:
    """What vLLM's Harmony parser uses of a tokenizer: a vocabulary and decoding o200k ids (its flush)."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    def get_vocab(self) -> dict[str, int]:
        return {}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self.encoding.decode(list(ids))
