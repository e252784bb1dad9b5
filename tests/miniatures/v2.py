"""Defects for catalog v2: one per new case, broken the way real engines break it, and one that does not
stream incrementally. Each is the reference with one thing changed (a Machine subclass, a codec subclass
behind the family's own grammar, or a Defect.transform)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from contract.cases.family import Family
from contract.cases.model import Delta, Message, RequestContext, Tool, ToolCallDelta
from parsers.reference.families import grammar
from parsers.reference.families import hermes as hermes_ref
from parsers.reference.families import kimi_k2 as kimi_ref
from parsers.reference.families import llama3_json as llama_ref
from parsers.reference.families import mistral as mistral_ref
from parsers.reference.families import mistral_pre_v11 as mistral_pre_ref
from parsers.reference.families import qwen3_coder as qwen_ref
from parsers.reference.grammars.delimited import _At as _DelimitedAt
from parsers.reference.grammars.json_array import JsonArray, _At
from parsers.reference.grammars.json_block import JsonBlock
from parsers.reference.grammars.named_json import JsonNesting, NamedJson
from parsers.reference.grammars.xml_function import XmlFunction
from parsers.reference.machine import Machine, State
from parsers.reference.scan import JsonStrings

from .defects import Defect, Miniature


def _regrammar(family: Family, context: RequestContext, **changes: Any) -> Machine:
    return Machine(dataclasses.replace(grammar(family.name), **changes), family.reasoning, context)


# --- values typed by the schema (Qwen3-Coder's XML parameters) ----------------------------------------------


def _type_only(tool: Tool) -> Tool:
    properties = {key: schema if isinstance(schema.get("type"), str) else {"type": "string"}
                  for key, schema in (tool.parameters.get("properties") or {}).items()}
    return dataclasses.replace(tool, parameters={**tool.parameters, "properties": properties})


class IgnoresSchemaUnions(Defect):
    """Types a value from its schema's `type` only: a type list, anyOf or oneOf is not understood and the
    value falls back to a string (Optional[int] stays "5", a nullable field "null")."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        context = dataclasses.replace(context, tools=tuple(_type_only(t) for t in context.tools))
        return Machine(grammar(family.name), family.reasoning, context)


class _NullFirst(XmlFunction):
    def _begin_value(self) -> None:
        super()._begin_value()
        if self.kind == "string":  # `null` checked before the schema, as vLLM's _convert_param_value does
            self.kind = None


class ReadsNullStringsAsNull(Defect):
    """Reads a parameter value `null` as null before looking at the schema: a string parameter whose value
    is the text "null" comes back null (one kind of JSON-looking text typed although the schema says string)."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        f = qwen_ref
        return _regrammar(family, context, open=lambda marker, context: _NullFirst(
            f.SPEC, context, bare=marker == f.f.FUNCTION))


# --- markers outside sections, false starts (Hermes) --------------------------------------------------------


class LeaksStrayMarkers(Defect):
    """Knows only the markers that open a section: a lone `</tool_call>` is shown as content."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, strays=())


class _MarkerKept(JsonBlock):
    def _start(self, text: str) -> tuple[bool, str | None]:
        first = (self.head + text).lstrip()
        decided, leftover = super()._start(text)
        if decided and leftover is not None and not first.startswith(self.spec.close):
            self.stray = self.spec.open  # prose after OPEN: the text is content, and so is the marker
        return decided, leftover


class KeepsFalseStartMarker(Defect):
    """A start marker followed by prose is not a call, but the marker is left in the content."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _MarkerKept(hermes_ref.SPEC))


# --- JSON scanning (Hermes, Mistral) ------------------------------------------------------------------------


class _NoEscapes(JsonStrings):
    def step(self, char: str) -> bool:
        self.escaped = False  # a backslash escapes nothing: \" ends the string
        return super().step(char)


class _NaiveScanner(JsonBlock):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.strings = _NoEscapes()


class EndsStringAtEscapedQuote(Defect):
    """Its JSON string scanner ignores backslash escapes: after `\\"` it is outside the string, and
    marker text quoted further on ends the call."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _NaiveScanner(hermes_ref.SPEC))


class _NeverInString(JsonStrings):
    def step(self, char: str) -> bool:
        return False


class _BracketCounter(NamedJson):
    """Counts brackets in string literals too."""

    @property
    def nesting(self) -> JsonNesting | None:
        return self._nesting

    @nesting.setter
    def nesting(self, value: JsonNesting | None) -> None:
        if value is not None:
            value.strings = _NeverInString()
        self._nesting = value


class CountsBracketsInStrings(Defect):
    """Ends a call where its brackets balance, counting brackets inside strings too."""

    family = "mistral"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _BracketCounter(
            mistral_ref.SPEC, marker))


# --- where calls may begin ----------------------------------------------------------------------------------


class _OffsetZero(Machine):
    def _leading(self, final: bool) -> bool:
        for marker in self.grammar.leading:
            if self.buffer.startswith(marker):
                self._enter(marker)
                return False
        if not final and any(m.startswith(self.buffer) for m in self.grammar.leading):
            return True
        self.fresh = False
        return False

    def _undecided_start(self, final: bool) -> bool:
        assert self.reasoning is not None
        if self.buffer.startswith(self.reasoning.opener):
            return False
        if not final and self.reasoning.opener.startswith(self.buffer):
            return True
        self.state = State.CONTENT
        return False


class BareListOnlyAtOffsetZero(Defect):
    """Recognizes a bare call list only at offset 0: a newline before it makes it content."""

    family = "llama3_json"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _OffsetZero(grammar(family.name), family.reasoning, context)


class OpenerOnlyAtOffsetZero(Defect):
    """Recognizes the reasoning opener only at offset 0: a newline before it makes everything content."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _OffsetZero(grammar(family.name), family.reasoning, context)


class CallsOnlyAtStart(Defect):
    """Looks for Llama's bare JSON call only at the start of the output (or after <|python_tag|>)."""

    family = "llama3_json"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        starts = tuple(m for m in grammar(family.name).starts if m != llama_ref.TRAILING)
        return _regrammar(family, context, starts=starts)


# --- format variants ----------------------------------------------------------------------------------------


class _NullArguments(JsonBlock):
    def _complete(self, closed: bool) -> None:
        super()._complete(closed)
        if self.calls and self.arguments_at is None:
            self.calls[0].arguments = "null"  # json.dumps(call.get("arguments"))


class NoArgumentsNull(Defect):
    """A call object without an `arguments` key gets arguments `null` (json.dumps of a missing value)."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _NullArguments(hermes_ref.SPEC))


class IgnoresBareFunctions(Defect):
    """Opens calls only at `<tool_call>`: Qwen3-Coder's bare `<function=…>` blocks stay in content."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, starts=(qwen_ref.f.TOOL_CALL,))


class _NeedsArgs(NamedJson):
    def _head(self, buffer: str) -> tuple[int, int] | str | None:
        separator = self.spec.separator
        for i, char in enumerate(buffer):
            if buffer.startswith(separator, i):
                return i, len(separator)
            if separator.startswith(buffer[i:]):
                break
            if _name_char(char) or (char.isspace() and not (self.name + buffer[:i]).strip()):
                continue
            text, self.name = self.name + buffer, ""
            return text
        else:
            i = len(buffer)
        self.name += buffer[:i]
        self.pending = buffer[i:]
        return None


def _name_char(char: str) -> bool:
    return char.isalnum() or char in "._-:/"


class RequiresArgsToken(Defect):
    """Reads a Mistral call name only up to `[ARGS]`: `[TOOL_CALLS]name{json}`, the control token skipped by
    the detokenizer, is not a call."""

    family = "mistral"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _NeedsArgs(mistral_ref.SPEC, marker))


class _DropsNameless(kimi_ref.KimiSection):
    def _name_complete(self, final: bool) -> None:
        for index in sorted(self.nameless, reverse=True):
            if not final and index == len(self.calls) - 1 and self.at is _DelimitedAt.ARGUMENTS:
                continue  # still reading its arguments
            del self.calls[index]  # no `functions.NAME:IDX` head: not a call, and not text either
            self.nameless = {i - 1 if i > index else i: c for i, c in self.nameless.items() if i != index}


class DropsCounterCalls(Defect):
    """A Kimi call whose head is only a counter (no `functions.NAME:`) is silently dropped."""

    family = "kimi_k2"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _DropsNameless(context))


class _StringKept(JsonBlock):
    def _final_arguments(self) -> str:
        assert self.arguments_at is not None
        try:
            value, end = json.JSONDecoder().raw_decode(self.body, self.arguments_at)
        except ValueError:
            return super()._final_arguments()
        if isinstance(value, str):
            return self.body[self.arguments_at : end]  # the string literal as the arguments text
        return super()._final_arguments()


class DoubleEncodesStringArguments(Defect):
    """Passes `"arguments": "{…}"` on as the JSON text it is (a string), not the object it holds."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _StringKept(hermes_ref.SPEC))


class _ListOnly(JsonArray):
    def feed(self, text: str) -> str | None:
        if self.at is _At.OPEN and (self.held + text).lstrip().startswith("{"):
            leftover, self.held = self.held + text, ""
            return leftover  # not the list it expects: no call, the object is content
        return super().feed(text)


class DropsSingleObject(Defect):
    """Expects the list `[{…}]` after `[TOOL_CALLS]`: a lone `{…}` call object is left in content."""

    family = "mistral_pre_v11"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _regrammar(family, context, open=lambda marker, context: _ListOnly(mistral_pre_ref.SPEC, marker))


# --- reasoning ----------------------------------------------------------------------------------------------


class _EndsAtOnce(Machine):
    def _enter(self, marker: str) -> None:
        style = self.reasoning
        if self.state is State.REASONING and style and marker in style.implicit_end and marker != style.closer:
            self.state = State.CONTENT  # the section start ends the reasoning at once
        super()._enter(marker)


class ImplicitEndAtOnce(Defect):
    """The old rule: a tool-section start inside reasoning ends the reasoning at once, even where the
    reasoning later closes (the start was quoted)."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _EndsAtOnce(grammar(family.name), family.reasoning, context)


class _NoReopen(Machine):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.reopen = False


class KeepsReopenedOpener(Defect):
    """Where the prompt prefilled the opener, an opener the output writes again stays in the reasoning."""

    family = "qwen3_coder"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _NoReopen(grammar(family.name), family.reasoning, context)


# --- batch extraction all or nothing ------------------------------------------------------------------------


class AllOrNothingBatch(Defect):
    """Non-streaming extraction as vLLM's Hermes parser does it: the calls are json.loads-ed in one try, and
    one failure returns the whole output as content (the good calls lost with the bad one). Its streaming
    path is the reference. (vLLM's non-greedy block regex, a defect of its own, is not copied: the blocks
    are the reference's.)"""

    family = "hermes"


class _AllOrNothing(Miniature):
    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        message = super().parse(text, token_ids, context, stop)
        if stop == "length":
            return message  # a cut call is the truncation rule's business
        try:
            for call in message.tool_calls:
                json.loads(call.arguments)
        except ValueError:
            return Message(content=text, finish_reason="stop")
        return message


AllOrNothingBatch.miniature = _AllOrNothing  # type: ignore[attr-defined]


# --- incremental streaming ----------------------------------------------------------------------------------


class HoldsWholeCalls(Defect):
    """Buffers each call's argument deltas until the call ends (the next call, other text or the end of
    the stream): right in every mode, but a long argument reaches the client only at once."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        held: list[ToolCallDelta] = state.setdefault("held", [])
        out: list[Delta] = []
        for delta in deltas:
            pieces = [c for c in delta.tool_calls if c.name is None and c.id is None]
            if pieces and len(pieces) == len(delta.tool_calls) and not delta.content and not delta.reasoning \
                    and delta.finish_reason is None:
                held.extend(pieces)
                continue
            if held:
                out += [Delta(tool_calls=(c,)) for c in held]
                held.clear()
            out.append(delta)
        return out


V2: dict[str, Defect] = {
    "ignores_schema_unions": IgnoresSchemaUnions(),
    "reads_null_strings_as_null": ReadsNullStringsAsNull(),
    "leaks_stray_markers": LeaksStrayMarkers(),
    "keeps_false_start_marker": KeepsFalseStartMarker(),
    "all_or_nothing_batch": AllOrNothingBatch(),
    "ends_string_at_escaped_quote": EndsStringAtEscapedQuote(),
    "counts_brackets_in_strings": CountsBracketsInStrings(),
    "bare_list_only_at_offset_zero": BareListOnlyAtOffsetZero(),
    "no_arguments_null": NoArgumentsNull(),
    "ignores_bare_functions": IgnoresBareFunctions(),
    "requires_args_token": RequiresArgsToken(),
    "drops_counter_calls": DropsCounterCalls(),
    "double_encodes_string_arguments": DoubleEncodesStringArguments(),
    "drops_single_object": DropsSingleObject(),
    "calls_only_at_start": CallsOnlyAtStart(),
    "implicit_end_at_once": ImplicitEndAtOnce(),
    "keeps_reopened_opener": KeepsReopenedOpener(),
    "opener_only_at_offset_zero": OpenerOnlyAtOffsetZero(),
    "holds_whole_calls": HoldsWholeCalls(),
}
