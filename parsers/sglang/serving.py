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
- response-template parsers (`response_template`, `beam`: they read the tokenizer's `response_template`):
  after rendering, the server keeps special tokens in the output (`configure_response_template_request`)
  and records the rendered prompt as the parsers' prefix (`_set_response_parser_context`); a detector
  that constrains every turn (beam) gets the template's turn grammar when its tag can be written, and
  then parses as constrained (`grammar_holds_calls`); with it the answer's opener ends tool parsing;
- a forced tool_choice ("required", a named function; `_process_tool_calls` / `_process_tool_call_stream`): the
  detector parses where it owns the output's format (a structural tag, or a format it parses natively), else
  the output is the JSON array the request's schema asked for (`constraint`, as `_process_messages` chooses
  it), parsed by the server (`orjson`; streaming: `JsonArrayParser`), the detector bypassed;
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
from functools import cached_property
from typing import Any

import orjson
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, ToolChoice
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.function_call.json_array_parser import JsonArrayParser
from sglang.srt.function_call.utils import get_json_schema_constraint
from sglang.srt.parser.reasoning_parser import IQuestQ1ReasoningDetector, ReasoningParser
from sglang.srt.parser.response_template import (
    ResponseTemplateReasoningDetector,
    ResponseTemplateToolDetector,
    configure_response_template_request,
    grammar_holds_calls,
)

from parsers import Delta, Message, ToolCall, ToolCallDelta


def constrained(request: ChatCompletionRequest) -> bool:
    """Whether the template's grammar held the output's calls, which response-template parsers then rely on."""
    return grammar_holds_calls(request._response_parser_tool_grammar, request._response_parser_grammar_start)


def answer_started(reasoner: Any) -> bool:
    """`_answer_started`: the output opened the answer a template grammar admits instead of calls."""
    detector = getattr(reasoner, "detector", None)
    return isinstance(detector, ResponseTemplateReasoningDetector) and detector.answer_started


def forced(request: ChatCompletionRequest) -> bool:
    """`is_required`: the request forces a call ("required", or a named function)."""
    return request.tool_choice == "required" or isinstance(request.tool_choice, ToolChoice)


def history_calls(request: ChatCompletionRequest) -> int:
    return sum(len(m.tool_calls or ()) for m in request.messages if m.role == "assistant")


@dataclass(frozen=True)
class Server:
    """One `--tool-call-parser` / `--reasoning-parser` configuration and the model's tokenizer."""

    tool: str | None
    reasoning: str | None
    tokenizer: Any

    @cached_property
    def reasoning_default(self) -> str | None:
        """The reasoning detector's `reasoning_default`, read once per server as `OpenAIServingChat.__init__` does."""
        assert self.reasoning is not None
        return ReasoningParser(model_type=self.reasoning, stream_reasoning=True,
                               tokenizer=self.tokenizer).detector.reasoning_default

    def requested_reasoning(self, request: ChatCompletionRequest) -> bool:
        """`_get_reasoning_from_request` on a template whose thinking toggle the server cannot infer (the graded
        tokenizer carries no chat template): per parser, else the reasoning detector's `reasoning_default` reads
        the request's `chat_template_kwargs`."""
        kwargs = request.chat_template_kwargs
        if self.reasoning is None:
            return False
        if self.reasoning == "iquest_q1":
            return IQuestQ1ReasoningDetector.thinking_enabled(kwargs or {})
        if self.reasoning == "minimax-m3":
            return (kwargs or {}).get("thinking_mode") == "enabled"
        if self.reasoning == "hunyuan":
            return request.reasoning_effort not in (None, "none", "no_think")
        mode = self.reasoning_default
        if mode == "always":
            return True
        if mode == "mistral":
            return request.reasoning_effort is not None and request.reasoning_effort != "none"
        if mode in ("thinking", "enable_thinking"):
            return not kwargs or kwargs.get(mode) is not False
        if mode in ("explicit_thinking", "explicit_enable_thinking"):
            return kwargs is not None and kwargs.get(mode.replace("explicit_", "")) is True
        return False

    def reasoning_parser(self, request: ChatCompletionRequest, template_forces: bool, stream: bool) -> Any:
        """The request's reasoning parser, forced into reasoning where the template prefills the opener
        (`template_manager.force_reasoning`) or the request asks for reasoning (`requested_reasoning`)."""
        if self.reasoning is None:
            return None
        return ReasoningParser(
            model_type=self.reasoning,
            stream_reasoning=request.stream_reasoning if stream else False,
            force_reasoning=template_forces or self.requested_reasoning(request),
            request=request,
            tokenizer=self.tokenizer,
            tool_call_parser_active=self.tool_parsing(request),
        )

    def tool_parsing(self, request: ChatCompletionRequest) -> bool:
        return self.tool is not None and bool(request.tools) and request.tool_choice != "none"

    def tool_parser(self, request: ChatCompletionRequest, choice: bool = True) -> FunctionCallParser:
        """The request's tool parser (`choice`: built with its tool_choice, as the batch path and a forced stream's
        probe are; an unforced stream's is built without)."""
        return FunctionCallParser(request.tools, self.tool, tokenizer=self.tokenizer,
                                  tool_choice=request.tool_choice if choice else None,
                                  prefix=request._response_parser_prefix, constrained=constrained(request))

    def stream_tool_parser(self, request: ChatCompletionRequest) -> FunctionCallParser | JsonArrayParser:
        """`_process_tool_call_stream`'s parser: for a forced choice, the detector where it owns the output's format
        (a structural tag, or a format it parses natively), else `JsonArrayParser` for the JSON the schema asked for."""
        if not forced(request):
            return self.tool_parser(request, choice=False)
        probe = self.tool_parser(request)
        return probe if probe.owns_tool_format() else JsonArrayParser()

    def constraint(self, request: ChatCompletionRequest) -> tuple[str, Any] | None:
        """The constraint `_process_messages` puts on the request's output: GLM-4.7's full-assistant grammar, the
        detector's structural tag (model-native, else the legacy one built from its `structure_info`), or for a
        forced choice a JSON schema, unless the detector parses required natively."""
        tools = request.tools or []
        if self.tool is None or not tools or request.tool_choice == "none":
            return None
        if self.tool == "glm47" and not any(tool.function.strict for tool in tools):
            thinking = (request.chat_template_kwargs or {}).get("enable_thinking")
            return FunctionCallParser(tools, self.tool).get_structure_constraint(
                request.tool_choice, parallel_tool_calls=request.parallel_tool_calls,
                thinking_mode=True if thinking is None else bool(thinking))
        parser = FunctionCallParser(tools, self.tool, tokenizer=self.tokenizer)
        chosen = parser.get_structure_constraint(request.tool_choice, parallel_tool_calls=request.parallel_tool_calls,
                                                 thinking_mode=self.reasoning is None and self.requested_reasoning(request))
        if chosen is None and forced(request) and not parser.detector.parses_required_natively():
            return "json_schema", get_json_schema_constraint(tools, request.tool_choice,
                                                             parallel_tool_calls=request.parallel_tool_calls)
        return chosen

    def template_driven(self, request: ChatCompletionRequest) -> bool:
        """`_requires_response_template_detokenization`: a response-template reasoning parser, or tool parser on
        a request whose tools it parses."""
        if self.reasoning is not None and issubclass(
                ReasoningParser.DetectorMap[self.reasoning], ResponseTemplateReasoningDetector):
            return True
        tool = FunctionCallParser.ToolCallParserEnum.get(self.tool) if self.tool else None
        return (request.tool_choice != "none" and bool(request.tools) and tool is not None
                and issubclass(tool, ResponseTemplateToolDetector))

    def turn_grammar(self, request: ChatCompletionRequest) -> bool:
        """Whether an unconstrained turn takes the template's own tool-call grammar (`_takes_turn_grammar`, on
        by default with xgrammar): only for a detector that constrains every turn, and only if its tag exists."""
        tool = FunctionCallParser.ToolCallParserEnum.get(self.tool) if self.tool else None
        if (tool is None or not issubclass(tool, ResponseTemplateToolDetector) or not tool.constrains_every_turn
                or request.tool_choice not in ("auto", "none")
                or (request.response_format is not None and request.response_format.type != "text")):
            return False
        parser = FunctionCallParser(request.tools or [], self.tool, tokenizer=self.tokenizer)
        tag = parser.detector.get_structural_tag(tools=parser.structural_tag_tools(), tool_choice=request.tool_choice,
                                                 thinking_mode=self.reasoning is not None,
                                                 parallel_tool_calls=request.parallel_tool_calls)
        return tag is not None

    def render(self, request: ChatCompletionRequest, prompt: str) -> ChatCompletionRequest:
        """What the server records on the request once it rendered `prompt`, for response-template parsers."""
        if self.template_driven(request):
            configure_response_template_request(request)
            request._response_parser_prefix = prompt
            request._response_parser_tool_grammar = self.turn_grammar(request)
        return request

    def call_id(self, name: str | None, index: int, history: int) -> str:
        if self.tool == "kimi_k2":
            return f"functions.{name}:{history + index}"
        return f"call_{uuid.uuid4().hex[:24]}"

    def parse(self, request: ChatCompletionRequest, template_forces: bool, text: str, stop: str) -> Message:
        """A non-streaming response to `request` whose generated text is `text`, ended by `stop`."""
        reasoning = ""
        reasoner = self.reasoning_parser(request, template_forces, stream=False)
        if reasoner is not None and request.separate_reasoning:
            found, text = reasoner.parse_non_stream(text)
            reasoning, text = found or "", text or ""
        calls: list[ToolCall] = []
        if self.tool_parsing(request) and not answer_started(reasoner):
            parser = self.tool_parser(request)
            if forced(request) and not parser.owns_tool_format():
                return self._json_calls(request, reasoning, text, stop)
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

    def _json_calls(self, request: ChatCompletionRequest, reasoning: str, text: str, stop: str) -> Message:
        """`_process_tool_calls`' JSON path for a forced choice whose format the detector does not own: the output
        read as a JSON array (or one object) of `{"name", "parameters"}`; where it is not one, the text as content."""
        try:
            data = orjson.loads(text)
            data = [data] if isinstance(data, dict) else data
            if not isinstance(data, list) or not all(isinstance(call, dict) and "name" in call for call in data):
                raise ValueError("not a JSON array of calls with names")
        except (ValueError, orjson.JSONDecodeError):
            return Message(content=text, reasoning=reasoning, finish_reason=stop)
        history = history_calls(request)
        calls = tuple(ToolCall(name=call["name"], arguments=json.dumps(call.get("parameters", {}), ensure_ascii=False),
                               id=self.call_id(call["name"], i, history)) for i, call in enumerate(data))
        return Message(reasoning=reasoning, tool_calls=calls, finish_reason="tool_calls" if stop == "stop" else stop)

    def open_stream(self, request: ChatCompletionRequest, template_forces: bool) -> Stream:
        return Stream(self, request, template_forces)


class Stream:
    """One streamed response: `feed(delta_text)` per engine step, `finish(stop)` at the end."""

    def __init__(self, server: Server, request: ChatCompletionRequest, template_forces: bool) -> None:
        self.server = server
        self.request = request
        self.reasoner = server.reasoning_parser(request, template_forces, stream=True)
        self.tools = server.stream_tool_parser(request) if server.tool_parsing(request) else None
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
        if self.tools is None or answer_started(self.reasoner):
            if text:
                deltas.append(Delta(content=text))
            return deltas
        normal, items = self._tool_step(text or "", finishing)
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

    def _tool_step(self, text: str, finishing: bool) -> tuple[str, list[Any]]:
        """One step of the tool parser (a flush at the finish): its normal text and call items."""
        tools = self.tools
        if isinstance(tools, JsonArrayParser):
            declared = self.request.tools or []
            result = tools.parse_streaming_increment(text, declared)
            normal, items = result.normal_text, list(result.calls)
            if finishing:
                end = tools.finish(declared)
                normal, items = (normal or "") + end.normal_text, [*items, *end.calls]
            return normal, items
        assert tools is not None
        normal, items = tools.parse_stream_chunk(text)
        if finishing:
            end_text, end_items = tools.parse_stream_end()
            normal, items = (normal or "") + end_text, [*items, *end_items]
        return normal, items

    def _unstreamed_arguments(self) -> list[Delta]:
        """The argument tail the server sends at the finish when the detector holds more than it streamed."""
        assert self.tools is not None
        detector = getattr(self.tools, "detector", self.tools)
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
        detector = getattr(self.tools, "detector", self.tools)
        incomplete = getattr(detector, "incomplete_tool_call_indices", set()) if self.tools else set()
        finish = "tool_calls" if self.made_calls and stop == "stop" and not incomplete else stop
        return [*deltas, Delta(finish_reason=finish)]
