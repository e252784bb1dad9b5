"""`transformers serve`'s Responses path (cli/serving/response.py, `ResponseHandler`), for the same server.

`handle_request` nests the flat tools (`_normalize_tools`), renders the prompt (here: the matrix's prompt ids)
and hands off to the handler's own methods, called here as they are with the generation replayed:
- batch: `_non_streaming`, whose `generate_non_streaming` returns the generated ids and their decode with special
  tokens skipped (as `GenerateManager` does); its `JSONResponse` body is the response;
- streaming: `_streaming`, whose `generate_streaming` returns a `DirectStreamer` on this stream's loop and queue,
  the prompt put first (as `model.generate()` does). Each token is put, the callbacks the streamer scheduled run,
  and the SSE body (`event_stream`) is read while the queue holds items, so each event belongs to the step that
  caused it; `streamer.end()` finishes it. Text without ids (the character tier) goes to the response parser's
  own `feed` and its items onto the queue, as `DirectStreamer.put` does with a decoded piece.

The server passes no finish reason on (neither method reads one): a response is "completed" however generation
ended. Request validation (`_validate_request`) is left out, as the chat adapter leaves it out (here it would
refuse every request the matrix sends: `chat_template_kwargs`, which `handle_request` reads, is not a field of the
params class it validates against).

Framework-free, as `serving.py` is: it imports transformers (whose serving module needs its `serving` extra) and
the project's types only.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from transformers.cli.serving.utils import DirectStreamer, response_events_to_chunks
from transformers.utils.import_utils import is_serve_available

from .serving import Server

try:
    from transformers.cli.serving.response import ResponseHandler
except NameError as exc:  # its classes are built on the serving extra's names (fastapi's, a recent openai's)
    raise ImportError(f"transformers' Responses handler cannot be imported here: {exc}") from exc

MODEL = "graded"  # the model id the server echoes


def _handler() -> ResponseHandler:
    """The handler without a model manager or generation state: the methods called here read neither."""
    if not is_serve_available():  # else the module's names (fastapi's, openai's) are undefined
        raise ImportError("transformers' Responses handler needs its serving extra (fastapi, uvicorn, openai)")
    return ResponseHandler(model_manager=None, generation_state=None)  # type: ignore[arg-type]


def _events(sse: str) -> list[dict[str, Any]]:
    """The events of an SSE body part (`data: {json}` blocks), as JSON."""
    return [json.loads(block[len("data: "):]) for block in sse.split("\n\n") if block.startswith("data: ")]


@dataclass(frozen=True)
class _Generated:
    """A generation manager whose generation is already done: `generate_non_streaming` returns its ids."""

    output_ids: list[int]

    async def generate_non_streaming(self, model: Any, processor: Any, inputs: dict[str, Any], gen_config: Any,
                                     request_id: str) -> tuple[str, int, list[int]]:
        text = processor.decode(self.output_ids, skip_special_tokens=True)
        return text, len(inputs["input_ids"]), self.output_ids


def respond(server: Server, body: dict[str, Any], prompt_ids: list[int], output_ids: list[int]) -> dict[str, Any]:
    """The non-streaming response (as JSON) to `body` whose generation is `output_ids`."""
    tools = ResponseHandler._normalize_tools(body.get("tools"))
    request = _handler()._non_streaming(str(uuid.uuid4()), server.model, server.tokenizer, MODEL, body,
                                        {"input_ids": prompt_ids}, None, _Generated(output_ids), tools=tools)
    return json.loads(asyncio.run(request).body)


@dataclass
class ResponseStream:
    """One streamed response: `feed(ids)` per engine step (one `put` per token), `finish()` at the end; each returns
    the events the server sent meanwhile."""

    server: Server
    body: dict[str, Any]
    prompt_ids: list[int]
    loop: asyncio.AbstractEventLoop = field(init=False, default_factory=asyncio.new_event_loop)
    queue: asyncio.Queue[Any] = field(init=False, default_factory=asyncio.Queue)
    streamer: Any = field(init=False, default=None)  # the DirectStreamer `_streaming` asked for
    parser: Any = field(init=False, default=None)  # the ResponseParser `_streaming` built

    def __post_init__(self) -> None:
        tools = ResponseHandler._normalize_tools(self.body.get("tools"))
        response = _handler()._streaming(str(uuid.uuid4()), self.server.model, self.server.tokenizer, MODEL,
                                         self.body, {"input_ids": self.prompt_ids}, None, gen_manager=self,
                                         tools=tools)
        self.sse = response.body_iterator
        self.pending = self._next() or []  # response.created and .in_progress, sent before the queue is read

    def generate_streaming(self, model: Any, processor: Any, inputs: dict[str, Any], gen_config: Any,
                           request_id: str, response_parser: Any = None) -> tuple[asyncio.Queue[Any], Any]:
        """The generation manager's part: a `DirectStreamer` onto this stream's queue, the prompt put first."""
        self.parser = response_parser
        self.streamer = DirectStreamer(processor._tokenizer, self.loop, self.queue, response_parser=response_parser)
        self.streamer.put(np.array(inputs["input_ids"]))  # skipped, as the first put (the prompt) is
        return self.queue, self.streamer

    def _next(self) -> list[dict[str, Any]] | None:
        """The events of the SSE body's next part; None once it ended."""
        try:
            return _events(self.loop.run_until_complete(anext(self.sse)))
        except StopAsyncIteration:
            return None

    def _read(self) -> list[dict[str, Any]]:
        """Run the callbacks the streamer scheduled, then read the body while the queue holds items (it never
        waits on an empty queue)."""
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        events, self.pending = self.pending, []
        while not self.queue.empty():
            events += self._next() or []
        return events

    def feed(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        events = self._read()  # the prefill's items (e.g. a prompt that opened reasoning)
        for token_id in ids:
            self.streamer.put(np.array([token_id]))
            events += self._read()
        return events

    def feed_text(self, text: str) -> list[dict[str, Any]]:
        """Text that arrives without token ids: into the response parser's own `feed`, its items queued."""
        for item in [text] if self.parser is None else response_events_to_chunks(self.parser.feed(text)):
            self.queue.put_nowait(item)
        return self._read()

    def finish(self) -> list[dict[str, Any]]:
        """`streamer.end()` (the end-of-stream sentinel queued), then the rest of the body."""
        self.streamer.end()
        events = self._read()
        while (more := self._next()) is not None:
            events += more
        self.loop.close()
        return events
