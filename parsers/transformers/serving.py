"""`transformers serve`'s chat-completions path (cli/serving/chat_completion.py) around its response parser.

- batch (`_non_streaming`): `parse_assistant_message` — the template of the model type, the prompt
  decoded as the parser's `prefix`, `tokenizer.parse_response` on the generated ids (decoded with their
  special tokens), then `tool_calls` ids `{request_id}_tool_call_{i}`; finish_reason `tool_calls` when a
  call was parsed, else `length` when max tokens were hit, else `stop`;
- streaming (`_streaming`): the server's own `DirectStreamer` decodes one token at a time
  (`DecodeStream`, special tokens kept) and feeds each piece to the `ResponseParser` from
  `build_response_parser`; its queue items (content text, `ReasoningText`, a whole `ToolCall` when the
  call's region closes) become one SSE chunk each; at the end `streamer.end()` finalizes the parser
  (a failure there is logged and the tail dropped, as the server does) and the last chunk carries the
  finish reason, decided as in batch from whether any call was streamed.

Text without ids (the matrix's character tier) goes to the response parser's own `feed`, which takes any
text. The streamer's queue is drained after every token, in this thread, so each delta belongs to the step
that caused it. Framework-free on purpose: it imports transformers and the project's message types
only, so a standalone reproduction carries this very code.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from transformers.cli.serving.utils import (
    DirectStreamer,
    ReasoningText,
    build_response_parser,
    parse_assistant_message,
    response_events_to_chunks,
)
from transformers.cli.serving.utils import (
    ToolCall as ServedCall,
)

from parsers import Delta, Message, ToolCall, ToolCallDelta


@dataclass(frozen=True)
class ModelConfig:
    model_type: str


@dataclass(frozen=True)
class Model:
    """All the server reads of a loaded model to pick its response template: `config.model_type`."""

    config: ModelConfig


def _finish(made_calls: bool, stop: str) -> str:
    return "tool_calls" if made_calls else ("length" if stop == "length" else "stop")


@dataclass(frozen=True)
class Server:
    """`transformers serve` with a model of this type and its tokenizer (a `PreTrainedTokenizerFast`)."""

    model_type: str
    tokenizer: Any

    @property
    def model(self) -> Model:
        return Model(ModelConfig(self.model_type))

    def parse(self, request: dict[str, Any], prompt_ids: list[int], output_ids: list[int], stop: str) -> Message:
        """The non-streaming response to `request` whose generation is `output_ids`, ended by `stop`."""
        request_id = str(uuid.uuid4())
        cleaned = self.tokenizer.decode(output_ids, skip_special_tokens=True)
        content, reasoning, calls = parse_assistant_message(
            self.tokenizer, self.model, output_ids, input_ids=prompt_ids, cleaned_content=cleaned,
            tools=request.get("tools"))
        tool_calls = tuple(ToolCall(c.name, c.arguments, id=f"{request_id}_tool_call_{i}")
                           for i, c in enumerate(calls or ()))
        return Message(content=content or "", reasoning=reasoning or "", tool_calls=tool_calls,
                       finish_reason=_finish(bool(tool_calls), stop))

    def open_stream(self, request: dict[str, Any], prompt_ids: list[int]) -> Stream:
        return Stream(self, request, prompt_ids)


@dataclass
class Stream:
    """One streamed response: `feed(ids)` per engine step (one `put` per token), `finish(stop)` at the end."""

    server: Server
    request: dict[str, Any]
    prompt_ids: list[int]
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    calls: int = 0

    def __post_init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.parser = build_response_parser(self.server.tokenizer, self.server.model, self.prompt_ids,
                                            tools=self.request.get("tools"))
        self.streamer = DirectStreamer(self.server.tokenizer._tokenizer, self.loop, self.queue, self.parser)
        self.streamer.put(np.array(self.prompt_ids))  # generate() first puts the prompt, which is skipped
        self.pending = self._drain()  # the prefill's events (e.g. a prompt that opened reasoning)

    def _drain(self) -> list[Delta]:
        """Run the callbacks the streamer scheduled on the loop, then turn the queued items into deltas."""
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        deltas = []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if item is None:
                continue
            deltas.append(self._delta(item))
        return deltas

    def _delta(self, item: Any) -> Delta:
        if isinstance(item, ServedCall):
            index, self.calls = self.calls, self.calls + 1
            return Delta(tool_calls=(ToolCallDelta(index=index, id=f"{self.request_id}_tool_call_{index}",
                                                   type="function", name=item.name, arguments=item.arguments),))
        if isinstance(item, ReasoningText):
            return Delta(reasoning=str(item))
        return Delta(content=str(item))

    def feed(self, ids: list[int]) -> list[Delta]:
        deltas, self.pending = self.pending, []
        for token_id in ids:
            self.streamer.put(np.array([token_id]))
            deltas += self._drain()
        return deltas

    def feed_text(self, text: str) -> list[Delta]:
        """Text that arrives without token ids (the character tier): straight into the response parser,
        whose `feed` takes any text (the server itself feeds it one decoded token at a time)."""
        deltas, self.pending = self.pending, []
        return deltas + [self._delta(item) for item in response_events_to_chunks(self.parser.feed(text))]

    def finish(self, stop: str) -> list[Delta]:
        self.streamer.end()
        deltas = [*self.pending, *self._drain()]
        self.loop.close()
        return [*deltas, Delta(finish_reason=_finish(self.calls > 0, stop))]
