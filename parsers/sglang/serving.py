"""SGLang's chat serving path (`OpenAIServingChat`, serving_chat.py) over its public parser classes.

SGLang's serving module cannot be imported on a CPU machine (it pulls torchvision), so this repeats
its composition, step by step:
- batch (`_build_chat_response`): `ReasoningParser(stream_reasoning=False, force_reasoning=…)`
  `.parse_non_stream`, then `FunctionCallParser.has_tool_call` / `parse_non_stream` on the
  remaining text (`_process_tool_calls`: with a marker but no complete call the detector's
  leftover text is the content and the incomplete call is dropped, as the server does);
- streaming (`_generate_stream_content`): per chunk the reasoning parser first, then the tool
  parser on its normal text; at the finish `parse_stream_end` of both and the unstreamed
  argument tail (`_check_for_unstreamed_tool_args`), on a last empty step (as when generation ends
  on a stop token; on a max_tokens cut the server flushes in the step of the last token);
- ids minted by the server (`_process_tool_call_id`): `call_<24 hex>`, except kimi_k2's
  `functions.{name}:{history calls + index}`; finish_reason "tool_calls" when a call was made
  and generation stopped on its own.

Framework-free on purpose: it imports SGLang and the project's message types only, so a standalone
reproduction (`nox -s repro`) carries this very code.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

from parsers import Delta, Message, ToolCall, ToolCallDelta


def history_calls(request: ChatCompletionRequest) -> int:
    return sum(len(m.tool_calls or ()) for m in request.messages if m.role == "assistant")


@dataclass(frozen=True)
class Server:
    """One `--tool-call-parser` / `--reasoning-parser` configuration and the model's tokenizer."""

    tool: str | None
    reasoning: str | None
    tokenizer: Any

    def reasoning_parser(self, request: ChatCompletionRequest, force_reasoning: bool, stream: bool) -> Any:
        if self.reasoning is None:
            return None
        return ReasoningParser(
            model_type=self.reasoning,
            stream_reasoning=request.stream_reasoning if stream else False,
            force_reasoning=force_reasoning,
            request=request,
            tokenizer=self.tokenizer,
            tool_call_parser_active=self.tool_parsing(request),
        )

    def tool_parsing(self, request: ChatCompletionRequest) -> bool:
        return self.tool is not None and bool(request.tools) and request.tool_choice != "none"

    def tool_parser(self, request: ChatCompletionRequest) -> FunctionCallParser:
        return FunctionCallParser(request.tools, self.tool, tokenizer=self.tokenizer, tool_choice=request.tool_choice)

    def call_id(self, name: str | None, index: int, history: int) -> str:
        if self.tool == "kimi_k2":
            return f"functions.{name}:{history + index}"
        return f"call_{uuid.uuid4().hex[:24]}"

    def parse(self, request: ChatCompletionRequest, force_reasoning: bool, text: str, stop: str) -> Message:
        """A non-streaming response to `request` whose generated text is `text`, ended by `stop`."""
        reasoning = ""
        reasoner = self.reasoning_parser(request, force_reasoning, stream=False)
        if reasoner is not None and request.separate_reasoning:
            found, text = reasoner.parse_non_stream(text)
            reasoning, text = found or "", text or ""
        calls: list[ToolCall] = []
        if self.tool_parsing(request):
            parser = self.tool_parser(request)
            if parser.has_tool_call(text):
                try:
                    text, items = parser.parse_non_stream(text)
                except Exception:  # noqa: BLE001 - the server logs the error and keeps the text as content
                    items = []
                # no complete call: the server keeps the detector's leftover text and drops the rest
                history = history_calls(request)
                calls = [
                    ToolCall(name=item.name, arguments=item.parameters, id=self.call_id(item.name, i, history))
                    for i, item in enumerate(items)
                ]
        finish = "tool_calls" if calls and stop == "stop" else stop
        return Message(content=text or "", reasoning=reasoning, tool_calls=tuple(calls), finish_reason=finish)

    def open_stream(self, request: ChatCompletionRequest, force_reasoning: bool) -> Stream:
        return Stream(self, request, force_reasoning)


class Stream:
    """One streamed response: `feed(delta_text)` per engine step, `finish(stop)` at the end."""

    def __init__(self, server: Server, request: ChatCompletionRequest, force_reasoning: bool) -> None:
        self.server = server
        self.request = request
        self.reasoner = server.reasoning_parser(request, force_reasoning, stream=True)
        self.tools = server.tool_parser(request) if server.tool_parsing(request) else None
        self.history = history_calls(request)
        self.made_calls = False

    def _step(self, text: str, finishing: bool) -> list[Delta]:
        deltas: list[Delta] = []
        if self.reasoner is not None and self.request.separate_reasoning:
            reasoning, text = self.reasoner.parse_stream_chunk(text)
            if finishing:
                end_reasoning, end_text = self.reasoner.parse_stream_end()
                reasoning = (reasoning or "") + (end_reasoning or "")
                text = (text or "") + (end_text or "")
            if reasoning:
                deltas.append(Delta(reasoning=reasoning))
        if self.tools is None:
            if text:
                deltas.append(Delta(content=text))
            return deltas
        normal, items = self.tools.parse_stream_chunk(text or "")
        if finishing:
            end_text, end_items = self.tools.parse_stream_end()
            normal, items = (normal or "") + end_text, [*items, *end_items]
        if normal:
            deltas.append(Delta(content=normal))
        for item in items:
            self.made_calls = True
            first = bool(item.name)
            deltas.append(Delta(tool_calls=(ToolCallDelta(
                index=item.tool_index,
                id=self.server.call_id(item.name, item.tool_index, self.history) if first else None,
                type="function" if first else None,
                name=item.name if first else None,
                arguments=item.parameters,
            ),)))
        if finishing:
            deltas.extend(self._unstreamed_arguments())
        return deltas

    def _unstreamed_arguments(self) -> list[Delta]:
        """The argument tail the server sends at the finish when the detector holds more than it streamed."""
        assert self.tools is not None
        detector = self.tools.detector
        calls = getattr(detector, "prev_tool_call_arr", None)
        streamed = getattr(detector, "streamed_args_for_tool", None)
        if not calls or not streamed or len(calls) > len(streamed):
            return []
        index = len(calls) - 1
        expected = calls[index].get("arguments", {})
        expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
        actual = streamed[index]
        if not expected.startswith(actual) or expected == actual:
            return []
        return [Delta(tool_calls=(ToolCallDelta(index=index, arguments=expected[len(actual):]),))]

    def feed(self, text: str) -> list[Delta]:
        return self._step(text, finishing=False)

    def finish(self, stop: str) -> list[Delta]:
        deltas = self._step("", finishing=True)
        incomplete = getattr(self.tools.detector, "incomplete_tool_call_indices", set()) if self.tools else set()
        finish = "tool_calls" if self.made_calls and stop == "stop" and not incomplete else stop
        return [*deltas, Delta(finish_reason=finish)]
