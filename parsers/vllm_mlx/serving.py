"""vllm-mlx's OpenAI chat server (`vllm_mlx.server`), in-process, for one server configuration.

`vllm-mlx serve --enable-auto-tool-choice --tool-call-parser T --reasoning-parser R` configures
module globals of `vllm_mlx.server` (`cli.serve_command`); `Server.configured()` sets them exactly so
around every call into the server and restores the previous values afterwards, so pipelines graded
one after another in one process never see each other's configuration. A request that arrives while no
other is in flight meets a freshly started server (its cached tool parser instance empty); requests in
flight together share the server's globals as they are, whatever one of them left in them.

- batch: what `create_chat_completion` does for `stream=False`: `_prepare_chat_completion_invocation`,
  `_extract_reasoning_and_tool_calls(output.text, …)` (the global reasoning parser, then the cached
  tool parser), `clean_output_text` on the content, finish_reason "tool_calls" when calls were found;
- streaming: the server's own `stream_chat_completion(engine, messages, request, **chat_kwargs)`
  async generator, driven in lockstep without an event loop: the replay engine's `stream_chat`
  suspends the whole coroutine chain each time the server asks for the next engine output, so the
  SSE events a step yields are exactly those caused by that output. Each `data:` event becomes one
  Delta, parsed from its JSON as a client reads it (role-only and usage-only events carry nothing).
  `Stream` drives any of the server's SSE generators so: `responses.py` drives the Responses API's with it.

The engine is a stand-in that replays the model's output: per step the text mlx-lm's streaming
detokenizer yields for the step's token ids (special tokens stay text; a lone trailing space token is
held until the next token, as `BPEStreamingDetokenizer` does), the chat template's rendered prompt
(the server probes it for a prefilled `<think>`), and a last, empty output with the finish reason.

Framework-free on purpose: it imports vllm-mlx, mlx-lm and the project's message types only, so a
standalone reproduction (`nox -s repro`) carries this very code.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from mlx_lm.tokenizer_utils import (
    BPEStreamingDetokenizer,
    NaiveStreamingDetokenizer,
    SPMStreamingDetokenizer,
    _is_bpe_decoder,
    _is_spm_decoder,
    _is_spm_decoder_no_space,
)
from vllm_mlx import server as mlx_server
from vllm_mlx.api.models import ChatCompletionRequest
from vllm_mlx.api.utils import clean_output_text
from vllm_mlx.engine.base import GenerationOutput
from vllm_mlx.reasoning import get_parser as get_reasoning_parser

from parsers import Delta, Message, ToolCall, ToolCallDelta

T = TypeVar("T")
MAX_TOKENS = 4096  # the request's budget: larger than any sample, so only the sample's own stop counts


_PROTOTYPES: dict[int, tuple[Any, Any]] = {}  # id(tokenizer) -> (tokenizer, its first detokenizer or None)


def _first_detokenizer(tokenizer: Any) -> Any:
    """The streaming detokenizer `mlx_lm.tokenizer_utils.load` picks from tokenizer.json's decoder (its own
    matchers), built once; None for the naive one, which maps nothing."""
    decoder = json.loads(tokenizer.backend_tokenizer.to_str()).get("decoder")
    if _is_spm_decoder(decoder):
        return SPMStreamingDetokenizer(tokenizer)
    if _is_spm_decoder_no_space(decoder):
        return SPMStreamingDetokenizer(tokenizer, trim_space=False)
    return BPEStreamingDetokenizer(tokenizer) if _is_bpe_decoder(decoder) else None


def detokenizer(tokenizer: Any) -> Any:
    """A fresh streaming detokenizer of the class mlx-lm picks. mlx-lm builds one per request, mapping the
    whole vocabulary each time; the map is read-only, so a reset copy of the first is the same detokenizer
    without that cost."""
    held = _PROTOTYPES.get(id(tokenizer))
    if held is None or held[0] is not tokenizer:
        held = _PROTOTYPES[id(tokenizer)] = (tokenizer, _first_detokenizer(tokenizer))
    if held[1] is None:
        return NaiveStreamingDetokenizer(tokenizer)
    fresh = copy.copy(held[1])
    fresh.reset()
    return fresh


class _NextOutput:
    """Awaited by the replay engine: suspends the server until the driver hands it the next output."""

    def __await__(self) -> Any:
        output = yield self
        return output


class ReplayEngine:
    """What the server uses of an engine: its tokenizer, its chat template and the generated outputs."""

    model_name = "graded"
    is_mllm = False
    preserve_native_tool_format = False

    def __init__(self, tokenizer: Any, prompt: str, generated: GenerationOutput | None = None) -> None:
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.generated = generated  # the whole output, for a non-streaming `chat`

    def _apply_chat_template(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> str:
        """The rendered prompt (the server's implicit-thinking probe reads its end)."""
        return self.prompt

    async def chat(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> GenerationOutput:
        assert self.generated is not None, "a non-streaming chat needs the generated output"
        return self.generated

    async def stream_chat(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> Any:
        while True:
            output = await _NextOutput()
            yield output
            if output.finished:
                return


def delta(event: str) -> Delta | None:
    """One SSE event as the client reads it; None for events without a choice delta (`[DONE]`, usage)."""
    data = event.strip()
    if not data.startswith("data:"):
        return None
    data = data[len("data:"):].strip()
    if data == "[DONE]":
        return None
    choices = json.loads(data).get("choices") or []
    if not choices:
        return None
    choice = choices[0]
    body = choice.get("delta") or {}
    calls = tuple(
        ToolCallDelta(
            index=call.get("index", 0),
            id=call.get("id"),
            type=call.get("type"),
            name=(call.get("function") or {}).get("name"),
            arguments=(call.get("function") or {}).get("arguments"),
        )
        for call in body.get("tool_calls") or ()
    )
    return Delta(content=body.get("content"), reasoning=body.get("reasoning_content"), tool_calls=calls,
                 finish_reason=choice.get("finish_reason"))


_GLOBALS = ("_enable_auto_tool_choice", "_tool_call_parser", "_tool_parser_instance", "_reasoning_parser",
            "_reasoning_parser_name")  # what `vllm-mlx serve` configures in `vllm_mlx.server`


@dataclass(frozen=True)
class Server:
    """A server started with `--enable-auto-tool-choice --tool-call-parser T --reasoning-parser R`."""

    tool: str | None
    reasoning: str | None
    tokenizer: Any
    # while streams are open: their ids, and the globals as the last call into the server left them
    open_streams: set[int] = field(default_factory=set, compare=False)
    held: dict[str, Any] = field(default_factory=dict, compare=False)

    def started(self) -> dict[str, Any]:
        """The globals of a freshly started server."""
        return {"_enable_auto_tool_choice": self.tool is not None, "_tool_call_parser": self.tool,
                "_tool_parser_instance": None,  # built from the engine's tokenizer on first use
                "_reasoning_parser": get_reasoning_parser(self.reasoning)() if self.reasoning else None,
                "_reasoning_parser_name": self.reasoning}

    @contextmanager
    def configured(self, engine: ReplayEngine, stream: Stream | None = None) -> Iterator[None]:
        """The server module's globals as this server holds them, restored on exit: those of a fresh start when
        no stream is open, else as the last call left them; its loaded engine (`get_engine()`) is `engine`.
        `stream` is the stream the call serves: open until it is done or a call of it raises."""
        saved = {name: getattr(mlx_server, name) for name in (*_GLOBALS, "_engine")}
        for name, value in (self.held if self.open_streams else self.started()).items():
            setattr(mlx_server, name, value)
        mlx_server._engine = engine
        ended = False
        try:
            yield
        except BaseException:
            ended = True
            raise
        finally:
            if stream is not None:
                if ended or stream.done:
                    self.open_streams.discard(id(stream))
                else:
                    self.open_streams.add(id(stream))
            self.held.clear()
            if self.open_streams:
                self.held.update({name: getattr(mlx_server, name) for name in _GLOBALS})
            for name, value in saved.items():
                setattr(mlx_server, name, value)

    def request(self, body: dict[str, Any]) -> ChatCompletionRequest:
        """The request as the endpoint validates it (a rejected request raises, as a 4xx would)."""
        return ChatCompletionRequest(**body)

    def decoded(self, token_ids: Sequence[int]) -> str:
        """The whole output as the engine's detokenizer yields it (`GenerationOutput.text`)."""
        detok = detokenizer(self.tokenizer)
        for token in token_ids:
            detok.add_token(token)
        detok.finalize()
        return detok.text

    def parse(self, body: dict[str, Any], prompt: str, text: str, stop: str) -> Message:
        """A non-streaming response whose generated text is `text`, ended by `stop`."""
        request = self.request({**body, "stream": False})
        engine = ReplayEngine(self.tokenizer, prompt)
        with self.configured(engine):
            prepared = mlx_server._prepare_chat_completion_invocation(engine, request, MAX_TOKENS)
            reasoning, cleaned, calls = mlx_server._extract_reasoning_and_tool_calls(
                text, request, allow_reasoning=not mlx_server._thinking_disabled(request, prepared.chat_kwargs),
                engine=engine)
        tool_calls = tuple(ToolCall(name=c.function.name, arguments=c.function.arguments, id=c.id or "")
                           for c in calls or ())
        return Message(content=(clean_output_text(cleaned) if cleaned else None) or "", reasoning=reasoning or "",
                       tool_calls=tool_calls, finish_reason="tool_calls" if calls else stop)

    def open_stream(self, body: dict[str, Any], prompt: str) -> Stream[Delta]:
        request = self.request({**body, "stream": True})

        def sse(engine: ReplayEngine) -> AsyncIterator[str]:
            prepared = mlx_server._prepare_chat_completion_invocation(engine, request, MAX_TOKENS)
            return mlx_server.stream_chat_completion(engine, prepared.messages, request, **prepared.chat_kwargs)

        return Stream(self, ReplayEngine(self.tokenizer, prompt), sse, chat_deltas)


def chat_deltas(event: str) -> list[Delta]:
    """A chat completion chunk's delta, unless it carries nothing."""
    found = delta(event)
    return [] if found is None or found.empty else [found]


class Stream(Generic[T]):
    """One streamed response: `feed` per engine output (text or token ids), `finish` on the last, empty one; each
    returns what `read` makes of the SSE events the server yielded meanwhile. `sse(engine)` starts the server's
    event generator (called with the server configured)."""

    def __init__(self, server: Server, engine: ReplayEngine, sse: Callable[[ReplayEngine], AsyncIterator[str]],
                 read: Callable[[str], list[T]]) -> None:
        self.server = server
        self.engine = engine
        self.read = read
        self.detok = detokenizer(server.tokenizer)
        self.text = ""
        self.steps = 0
        self.done = False
        with server.configured(engine, self):
            self.sse = sse(engine)
        self.waiting: Any = None  # the server's coroutine, suspended where it asked for the next output
        self.opening = self._advance(None)  # what the server sends before its first request for output

    def _advance(self, output: GenerationOutput | None) -> list[T]:
        """Hand the server one engine output; what `read` makes of the SSE events it yields before asking again."""
        read: list[T] = []
        coroutine, value = self.waiting, output
        self.waiting = None
        with self.server.configured(self.engine, self):
            while not self.done:
                if coroutine is None:
                    coroutine, value = self.sse.__anext__(), None
                try:
                    suspended = coroutine.send(value)
                except StopIteration as event:
                    read += self.read(event.value)
                    coroutine = None
                    continue
                except StopAsyncIteration:
                    self.done = True
                    break
                if not isinstance(suspended, _NextOutput):
                    raise RuntimeError(f"the server awaited something other than the engine: {suspended!r}")
                self.waiting = coroutine
                break
        return read

    def _output(self, new_text: str, finished: bool, finish_reason: str | None) -> GenerationOutput:
        self.text += new_text
        self.steps += 1
        return GenerationOutput(text=self.text, new_text=new_text, completion_tokens=self.steps,
                                finished=finished, finish_reason=finish_reason)

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> list[T]:
        """One engine output: the detokenized text of `token_ids`, or `text` itself when there are none."""
        if token_ids is not None:
            for token in token_ids:
                self.detok.add_token(token)
            text = self.detok.last_segment
        return self._advance(self._output(text, False, None))

    def finish(self, stop: str) -> list[T]:
        self.detok.finalize()
        return self._advance(self._output(self.detok.last_segment, True, stop))
