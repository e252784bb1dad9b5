"""vLLM's Responses serving path (`OpenAIServingResponses`, `/v1/responses`), for the same server configuration.

The request is rendered as chat's is, and a parser instance `adjust_request`s it (`OnlineRenderer.render_responses`
-> `preprocess_chat`: `Server.prepare`, as for chat); per request the server builds one parser with the effective template kwargs, then:
- batch (`_make_response_output_items`): `parse(text, request, model_output_token_ids=…)`, reasoning dropped
  unless `include_reasoning`, calls through `maybe_filter_parallel_tool_calls`, items by
  `build_response_output_items`, the response by `ResponsesResponse.from_request` ("incomplete" when cut by length);
- streaming (`_process_simple_streaming_events`): per engine output `parse_delta(...)`, the delta filtered, split
  (`split_delta`) and handed to `SimpleStreamingEventProcessor`, whose open/delta/done events are sent; at the end
  the open item is closed and `response.completed` (or `.incomplete`) carries the streamed items.
Events are numbered as `responses_stream_generator` numbers them, after `response.created` and `.in_progress`.

gpt-oss (`use_harmony`) takes another path: a `HarmonyContext` appends each engine output (a `RequestOutput` of
o200k_harmony ids) to vLLM's `HarmonyParser`; one shot, every completed Harmony message becomes items
(`harmony_to_response_output`); streamed, each segment's delta and completed message become events
(`_process_harmony_streaming_events`), and the final response reuses the streamed items' ids.

Framework-free, as `serving.py` is, so that a standalone reproduction carries this very code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vllm.entrypoints.openai.responses.context import HarmonyContext
from vllm.entrypoints.openai.responses.harmony import harmony_to_response_output
from vllm.entrypoints.openai.responses.protocol import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseIncompleteEvent,
    ResponseInProgressEvent,
    ResponsesRequest,
    ResponsesResponse,
)
from vllm.entrypoints.openai.responses.streaming_events import (
    SimpleStreamingEventProcessor,
    StreamingState,
    emit_content_delta_events,
    emit_previous_item_done_events,
    emit_tool_action_events,
    split_delta,
)
from vllm.entrypoints.openai.responses.utils import (
    build_response_output_items,
    extract_function_tool_names,
    response_item_status,
    reuse_streamed_item_ids,
)
from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls
from vllm.outputs import CompletionOutput, RequestOutput

from .serving import Prepared, Server

MAX_TOKENS = 4096  # the default the server derives from the model's context length; only the envelope shows it
MODEL = "graded"


def _response(request: ResponsesRequest, output: list[Any], finish_reason: str | None,
              status: str | None = None) -> ResponsesResponse:
    status = status or ("incomplete" if finish_reason == "length" else "completed")
    return ResponsesResponse.from_request(request, request.to_sampling_params(MAX_TOKENS, {}), model_name=MODEL,
                                          created_time=0, output=output, status=status, usage=None)


def respond(server: Server, prepared: Prepared, text: str, output_ids: list[int], stop: str) -> dict[str, Any]:
    """The non-streaming response (as JSON) whose generated text is `text`, ended by `stop`."""
    request = prepared.request
    parser = server.new_parser(prepared)
    parser.set_prompt_token_ids(prepared.prompt_token_ids)
    reasoning, content, calls = parser.parse(text, request, enable_auto_tools=True, model_output_token_ids=output_ids)
    if not request.include_reasoning:
        reasoning = None
    items = build_response_output_items(reasoning=reasoning, content=content,
                                        tool_calls=maybe_filter_parallel_tool_calls(calls or [], request),
                                        tools=request.tools, finish_reason=stop)
    return _response(request, items, stop).model_dump(mode="json")


@dataclass
class ResponseStream:
    """One streamed response: `step` per engine output (the last with its finish reason) gives its events."""

    server: Server
    prepared: Prepared
    parser: Any = None
    processor: SimpleStreamingEventProcessor = field(init=False)
    sequence: int = 0

    def __post_init__(self) -> None:
        self.parser = self.server.new_parser(self.prepared)
        self.parser.set_prompt_token_ids(self.prepared.prompt_token_ids)
        self.processor = SimpleStreamingEventProcessor(tools=self.prepared.request.tools)

    def _numbered(self, events: Sequence[Any]) -> list[dict[str, Any]]:
        out = []
        for event in events:
            if hasattr(event, "sequence_number"):
                event.sequence_number = self.sequence
            self.sequence += 1
            out.append(event.model_dump(mode="json"))
        return out

    def start(self) -> list[dict[str, Any]]:
        initial = _response(self.prepared.request, [], None).model_dump(mode="json", by_alias=True)
        initial["status"] = "in_progress"
        return self._numbered([ResponseCreatedEvent(type="response.created", sequence_number=-1, response=initial),
                               ResponseInProgressEvent(type="response.in_progress", sequence_number=-1,
                                                       response=initial)])

    def step(self, text: str, token_ids: Sequence[int], finish_reason: str | None) -> list[dict[str, Any]]:
        request, processor = self.prepared.request, self.processor
        events: list[Any] = []
        delta = self.parser.parse_delta(delta_text=text, delta_token_ids=list(token_ids), request=request,
                                        prompt_token_ids=self.prepared.prompt_token_ids,
                                        finished=finish_reason is not None)
        if delta:
            for part in split_delta(maybe_filter_parallel_tool_calls(delta, request)):
                target, call = processor.resolve_target_state(part)
                if target.name == "NONE":
                    continue
                if processor.needs_transition(target, call):
                    events += processor.close_current()
                    events += processor.open(target, call)
                events += processor.emit_delta(part, None, lambda output: [])  # type: ignore[arg-type]
        if finish_reason is not None:
            events += processor.close_current(response_item_status(finish_reason))
            final = _response(request, processor.output_items, finish_reason)
            terminal = (ResponseIncompleteEvent(type="response.incomplete", sequence_number=-1, response=final)
                        if final.status == "incomplete" else
                        ResponseCompletedEvent(type="response.completed", sequence_number=-1, response=final))
            events.append(terminal)
        return self._numbered(events)


def _output(token_ids: Sequence[int], finish_reason: str | None, prompt_token_ids: list[int]) -> RequestOutput:
    """One engine output, as the engine hands it to the server (`finished` with a finish reason)."""
    completion = CompletionOutput(index=0, text="", token_ids=list(token_ids), cumulative_logprob=None,
                                  logprobs=None, finish_reason=finish_reason)
    return RequestOutput(request_id="graded", prompt=None, prompt_token_ids=prompt_token_ids, prompt_logprobs=None,
                         outputs=[completion], finished=finish_reason is not None)


def _harmony_context(server: Server, prepared: Prepared) -> HarmonyContext:
    request = prepared.request
    return HarmonyContext([], [], extract_function_tool_names(request.tools), server.new_parser(prepared), request)


def _harmony_response(context: HarmonyContext, request: ResponsesRequest) -> ResponsesResponse:
    """`responses_full_generator`'s Harmony branch: items per completed message, ids of streamed items reused."""
    output: list[Any] = []
    messages = context.messages[context.num_init_messages:]
    streamed = iter(context.streamed_items_by_message)
    next_streamed = next(streamed, None)
    for i, message in enumerate(messages):
        items = harmony_to_response_output(message, context.function_tool_names,
                                           incomplete=i == len(messages) - 1 and context.last_append_flush_status)
        if next_streamed is not None and next_streamed[0] is message:
            reuse_streamed_item_ids(items, next_streamed[1])
            next_streamed = next(streamed, None)
        output.extend(items)
    status = ("incomplete" if context.finish_reason == "length" else "completed") if output else "incomplete"
    return _response(request, output, context.finish_reason, status)


def harmony_respond(server: Server, prepared: Prepared, output_ids: list[int], stop: str) -> dict[str, Any]:
    """The non-streaming response of a gpt-oss server: the whole output appended at once."""
    context = _harmony_context(server, prepared)
    context.append_output(_output(output_ids, stop, prepared.prompt_token_ids))
    return _harmony_response(context, prepared.request).model_dump(mode="json")


@dataclass
class HarmonyResponseStream(ResponseStream):
    """A gpt-oss server's stream: segments of each appended output become events."""

    context: Any = None
    state: StreamingState = field(default_factory=StreamingState)

    def __post_init__(self) -> None:
        self.context = _harmony_context(self.server, self.prepared)

    def step(self, text: str, token_ids: Sequence[int], finish_reason: str | None) -> list[dict[str, Any]]:
        context, state = self.context, self.state
        context.append_output(_output(token_ids, finish_reason, self.prepared.prompt_token_ids))
        events: list[Any] = []
        for segment in context.last_append_segments:
            if segment.delta:
                events += emit_content_delta_events(segment, state, context.function_tool_names)
            elif (completed := segment.completed_message) is not None:
                done = list(emit_previous_item_done_events(completed, state, context.function_tool_names))
                done += emit_tool_action_events(completed, state, None)
                context.streamed_items_by_message.append(
                    (completed, [e.item for e in done if e.type == "response.output_item.done"]))
                events += done
                state.reset_for_new_item()
        if finish_reason is not None:
            final = _harmony_response(context, self.prepared.request)
            events.append(ResponseIncompleteEvent(type="response.incomplete", sequence_number=-1, response=final)
                          if final.status == "incomplete" else
                          ResponseCompletedEvent(type="response.completed", sequence_number=-1, response=final))
        return self._numbered(events)
