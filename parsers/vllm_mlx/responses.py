"""vllm-mlx's Responses API (`POST /v1/responses`, `vllm_mlx.server.create_response`), for the same server.

The endpoint converts the request to a chat request (`_responses_request_to_chat_request`) and runs it on the
loaded engine (`get_engine()`, here the replay engine), then:
- batch: `create_response` itself, called as FastAPI calls it (a real Starlette request carrying the body):
  `_run_responses_request` awaits `engine.chat(...)` for the whole output, parses calls from its text with the
  cached tool parser (`_parse_tool_calls_with_parser`), reasoning with the global reasoning parser, and builds the
  items (reasoning, message, calls, in that order) and the response object, "incomplete" when cut by length;
- streaming: the server's own `_stream_responses_request(request)` async generator, driven in lockstep as the chat
  stream is (`serving.Stream`): reasoning and text deltas are sent as the engine's outputs arrive; the calls are
  parsed from the whole text after the last output and sent then, each as one added item, one arguments delta and
  its done item.

Framework-free, as `serving.py` is, so that a standalone reproduction carries this very code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from vllm_mlx import server as mlx_server
from vllm_mlx.api.responses_models import ResponsesRequest
from vllm_mlx.engine.base import GenerationOutput

from .serving import ReplayEngine, Server, Stream


def _http_request(body: dict[str, Any]) -> Request:
    """The Starlette request FastAPI hands the endpoint: a POST whose body is `body`, never disconnected."""
    payload = json.dumps(body).encode()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": payload, "more_body": False}

    scope = {"type": "http", "method": "POST", "path": "/v1/responses", "query_string": b"",
             "headers": [(b"content-type", b"application/json")]}
    return Request(scope, receive)


def respond(server: Server, body: dict[str, Any], prompt: str, text: str, stop: str) -> dict[str, Any]:
    """The non-streaming response (as JSON) to `body` whose generated text is `text`, ended by `stop`."""
    body = {**body, "stream": False}
    engine = ReplayEngine(server.tokenizer, prompt, GenerationOutput(text=text, new_text=text, finish_reason=stop))
    with server.configured(engine):
        response = asyncio.run(mlx_server.create_response(ResponsesRequest(**body), _http_request(body)))
    return response.model_dump(mode="json")


def events(sse: str) -> list[dict[str, Any]]:
    """The events of one SSE message (`event: …` and `data: {json}` lines), as the JSON of their data."""
    return [json.loads(line[len("data:"):]) for line in sse.splitlines() if line.startswith("data:")]


class ResponseStream:
    """One streamed response: `feed` per engine output (text or token ids), `finish` on the last, empty one; each
    returns the events the server sent meanwhile (the first feed also `response.created` and `.in_progress`)."""

    def __init__(self, server: Server, body: dict[str, Any], prompt: str) -> None:
        request = ResponsesRequest(**{**body, "stream": True})
        self.stream = Stream(server, ReplayEngine(server.tokenizer, prompt),
                             lambda engine: mlx_server._stream_responses_request(request), events)
        self.pending = self.stream.opening

    def _sent(self, more: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent, self.pending = self.pending + more, []
        return sent

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> list[dict[str, Any]]:
        return self._sent(self.stream.feed(text, token_ids))

    def finish(self, stop: str) -> list[dict[str, Any]]:
        return self._sent(self.stream.finish(stop))
