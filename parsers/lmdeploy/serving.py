"""lmdeploy's chat serving path (`/v1/chat/completions`, api_server.py and core/chat_runner.py), for one
server configuration.

At start-up the server takes the `default` ResponseParser class and calls `set_parsers(reasoning, tool,
tokenizer)` on it (class-level state: here one subclass per configuration, so pipelines do not clobber
each other). Per request (`ChatRunner.prepare`):
- the client's JSON becomes lmdeploy's own `ChatCompletionRequest`; `parser_cls(request)` runs the tool
  parser's `adjust_request` (Kimi K2 and InternLM turn `skip_special_tokens` off), and the generation
  config is built from the adjusted request (`build_generation_config`);
- the engine's output ids are detokenized step by step by lmdeploy's incremental detokenizer
  (`HuggingFaceTokenizer.detokenize_incrementally`, as `AsyncEngine.generate` calls it) with that config's
  `skip_special_tokens` / `spaces_between_special_tokens`: markers the tokenizer counts as special vanish
  there, before any parser sees them;
- streaming (`ChatRunner.stream`): `stream_chunk(delta_text, delta_token_ids, final=…)` per engine step,
  then the engine's last, empty step carrying the finish reason (`final=True`); `stop` becomes
  `tool_calls` once a step emitted calls; a final step with no parser output still sends an empty delta;
- batch (`ChatRunner.collect`): `parse_complete(text, token_ids)` on the concatenated step texts; `stop`
  becomes `tool_calls` when calls were parsed.

Framework-free on purpose: it imports lmdeploy (and transformers, its tokenizer library) and the project's
message types only, so a standalone reproduction (`nox -s repro`) carries this very code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lmdeploy.serve.core.generation_config import build_generation_config
from lmdeploy.serve.openai.protocol import ChatCompletionRequest, DeltaMessage
from lmdeploy.serve.openai.utils import filter_parallel_tool_call_deltas, filter_parallel_tool_calls
from lmdeploy.serve.parsers import ResponseParserManager
from lmdeploy.tokenizer import DetokenizeState, HuggingFaceTokenizer
from transformers import PreTrainedTokenizerFast

from parsers import Delta, Message, ToolCall, ToolCallDelta

MODEL = "served-model"  # the name the server was started with; requests name it


def hf_tokenizer(tokenizer: Any) -> PreTrainedTokenizerFast:
    """A `tokenizers.Tokenizer` as AutoTokenizer loads a checkpoint whose tokenizer_config lists its special
    added tokens as additional special tokens (transformers counts only those as special when it converts
    ids to tokens, which is how lmdeploy's detokenizer skips them)."""
    specials = [t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special]
    hf = PreTrainedTokenizerFast(tokenizer_object=tokenizer, extra_special_tokens=specials)
    # lmdeploy's ResponseParser reads the whole vocabulary on every request (0.2 s for Qwen3's 151k tokens):
    # built once here, a copy per call, so grading a cell's many streams does not pay it each time
    vocab = hf.get_vocab()
    hf.get_vocab = lambda: dict(vocab)
    return hf


def delta(message: DeltaMessage, finish_reason: str | None = None) -> Delta:
    """A `DeltaMessage` (and the finish reason the chat runner attaches to it) as the project's Delta."""
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
    return Delta(content=message.content, reasoning=message.reasoning_content, tool_calls=calls,
                 finish_reason=finish_reason)


@dataclass(frozen=True)
class Prepared:
    """One request after `ChatRunner.prepare`: its response parser (holding the adjusted request) and the
    detokenization options of its generation config."""

    parser: Any
    skip_special_tokens: bool
    spaces_between_special_tokens: bool

    @property
    def request(self) -> ChatCompletionRequest:
        return self.parser.request


class Detokenizer:
    """lmdeploy's incremental detokenizer over prompt + output ids, one engine step at a time."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, prepared: Prepared, prompt_ids: Sequence[int]) -> None:
        self.wrapper = HuggingFaceTokenizer.__new__(HuggingFaceTokenizer)  # its __init__ loads from a folder
        self.wrapper.model = tokenizer
        self.prepared = prepared
        self.ids = list(prompt_ids)
        self.state = DetokenizeState(len(self.ids))

    def step(self, new_ids: Sequence[int]) -> str:
        self.ids += list(new_ids)
        text, self.state = self.wrapper.detokenize_incrementally(
            self.ids, self.state, skip_special_tokens=self.prepared.skip_special_tokens,
            spaces_between_special_tokens=self.prepared.spaces_between_special_tokens)
        return text


@dataclass
class TextWithoutIds:
    """The char tier's text (no token ids): what the detokenizer would have shown of it. With
    `skip_special_tokens`, complete special-token texts vanish; a tail that may still become one is held."""

    specials: tuple[str, ...]
    raw: str = ""
    done: int = 0

    def push(self, text: str) -> str:
        self.raw += text
        if not self.specials:
            ready, self.done = self.raw[self.done:], len(self.raw)
            return ready
        end = len(self.raw)
        for start in range(self.done, len(self.raw)):
            tail = self.raw[start:]
            if any(s.startswith(tail) and s != tail for s in self.specials):
                end = start
                break
        ready, self.done = self.raw[self.done:end], end
        for special in self.specials:
            ready = ready.replace(special, "")
        return ready

    def flush(self) -> str:
        rest, self.done = self.raw[self.done:], len(self.raw)
        return rest


@dataclass(frozen=True)
class Server:
    """A server started with `--tool-call-parser` / `--reasoning-parser` and the model's tokenizer."""

    tool: str | None
    reasoning: str | None
    tokenizer: PreTrainedTokenizerFast

    @cached_property
    def parser_cls(self) -> type:
        base = ResponseParserManager.get("default")
        cls = type(f"{base.__name__}_{self.tool}_{self.reasoning}", (base,), {})
        cls.set_parsers(reasoning_parser_name=self.reasoning, tool_parser_name=self.tool, tokenizer=self.tokenizer)
        return cls

    def prepare(self, request_json: dict[str, Any]) -> Prepared:
        """What `ChatRunner.prepare` does before generation: the response parser, the generation config."""
        parser = self.parser_cls(ChatCompletionRequest(**request_json))
        config = build_generation_config(parser.request, {}, max_new_tokens=parser.request.max_completion_tokens)
        return Prepared(parser, config.skip_special_tokens, config.spaces_between_special_tokens)

    def detokenizer(self, prepared: Prepared, prompt_ids: Sequence[int]) -> Detokenizer:
        return Detokenizer(self.tokenizer, prepared, prompt_ids)

    def parse(self, request_json: dict[str, Any], prompt_ids: Sequence[int], output_ids: Sequence[int],
              stop: str) -> Message:
        """A non-streaming response whose generated ids are `output_ids`, ended by `stop`."""
        prepared = self.prepare(request_json)
        text = self.detokenizer(prepared, prompt_ids).step(output_ids)
        content, calls, reasoning = prepared.parser.parse_complete(text, list(output_ids))
        finish = "tool_calls" if isinstance(calls, list) and calls and stop == "stop" else stop
        # the response choice's filter (chat_completions/serving.py: maybe_filter_parallel_tool_calls)
        calls = filter_parallel_tool_calls(calls, prepared.request.parallel_tool_calls)
        return Message(
            content=content or "",
            reasoning=reasoning or "",
            tool_calls=tuple(ToolCall(name=c.function.name, arguments=c.function.arguments, id=c.id or "")
                             for c in calls or ()),
            finish_reason=finish,
        )

    def open_stream(self, request_json: dict[str, Any], prompt_ids: Sequence[int]) -> Stream:
        return Stream(self, self.prepare(request_json), prompt_ids)


class Stream:
    """One streamed response: `feed` per engine step (its new ids), `finish` on the engine's last, empty step."""

    def __init__(self, server: Server, prepared: Prepared, prompt_ids: Sequence[int]) -> None:
        self.prepared = prepared
        self.detokenizer = server.detokenizer(prepared, prompt_ids)
        specials = tuple(server.tokenizer.all_special_tokens) if prepared.skip_special_tokens else ()
        self.without_ids = TextWithoutIds(specials)
        self.streaming_tools = False

    def _step(self, text: str, token_ids: Sequence[int], finish_reason: str | None) -> list[Delta]:
        parser = self.prepared.parser
        out = parser.stream_chunk(text, list(token_ids), final=finish_reason is not None)
        if not out:
            if finish_reason is None:
                return []
            out = [(DeltaMessage(role="assistant", content=""), False)]
        deltas = []
        for index, (message, tool_emitted) in enumerate(out):
            self.streaming_tools = self.streaming_tools or tool_emitted
            finish = finish_reason if index == len(out) - 1 else None
            if (self.prepared.request.tool_choice != "none" and parser.tool_parser is not None
                    and finish == "stop" and self.streaming_tools):
                finish = "tool_calls"
            # each stream choice's filter (chat_completions/serving.py: maybe_filter_parallel_tool_calls)
            message.tool_calls = filter_parallel_tool_call_deltas(message.tool_calls,
                                                                  self.prepared.request.parallel_tool_calls)
            deltas.append(delta(message, finish))
        return deltas

    def feed(self, token_ids: Sequence[int]) -> list[Delta]:
        """One engine step with these new ids (the engine yields no step without ids)."""
        if not token_ids:
            return []
        return self._step(self.detokenizer.step(token_ids), token_ids, None)

    def feed_text(self, text: str) -> list[Delta]:
        """The char tier: text split inside tokens, without ids."""
        shown = self.without_ids.push(text)
        return self._step(shown, (), None) if shown else []

    def finish(self, stop: str) -> list[Delta]:
        rest = self.without_ids.flush()
        deltas = self._step(rest, (), None) if rest else []
        return [*deltas, *self._step("", (), stop)]
