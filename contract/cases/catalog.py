"""The universal case catalog (shared/CASES.md) as data.

A case is format-independent: declared tools, a scenario made of segments (reasoning, narration,
calls), a truncation point and the request context. Families render it into wire text
(`fixtures/`); the expected result is derived from the scenario (`contract.cases.expected`). Ids are
stable: baselines and expectation files key on them. Never renumber; only add.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .model import NamedChoice, RequestContext, Tool


@dataclass(frozen=True)
class Reasoning:
    text: str


@dataclass(frozen=True)
class Content:
    """Narration. `preamble` marks Harmony commentary text addressed to the user; `in_section` narration the
    model writes inside the tool section, between two of its calls (formats whose one section holds them all)."""

    text: str
    preamble: bool = False
    in_section: bool = False


@dataclass(frozen=True)
class Call:
    """A call the model makes. `raw_arguments` replaces `arguments` when the model wrote invalid JSON;
    `native_index` is the model's own call counter where the family has native ids."""

    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None
    native_index: int | None = None


@dataclass(frozen=True)
class EmptySection:
    """A tool section (or call block) opened and closed with nothing inside."""


@dataclass(frozen=True)
class Stray:
    """A control marker outside any section, written as markup: a placeholder (`{stray}`, `{start}`) the
    family fills with one of its own markers. It carries no text of its own: the expected result drops it."""

    marker: str


Segment = Reasoning | Content | Call | EmptySection | Stray


class Truncation(Enum):
    NONE = "none"
    SECTION_END = "section_end"  # the closing marker of the section / last call is missing
    IN_ARGUMENTS = "in_arguments"  # generation stopped inside the last call's arguments
    IN_NAME = "in_name"  # generation stopped inside the last call's name: its header is cut
    REASONING_UNCLOSED = "reasoning_unclosed"  # the reasoning closer is absent


class Style(Enum):
    CANONICAL = "canonical"
    WHITESPACE = "whitespace"  # extra whitespace wherever the format allows it
    VARIANT = "variant"  # the family's alternate marker spellings
    LEADING_WHITESPACE = "leading_whitespace"  # a newline and spaces before the first token of the output
    REOPENED = "reopened"  # the reasoning opener written again although the prompt prefilled it
    NO_ARGUMENTS = "no_arguments"  # a call head directly followed by its end: no argument section at all
    UNWRAPPED = "unwrapped"  # calls without the wrapper or section marker around them (bare `<function=…>`)
    CONTROL_SKIPPED = "control_skipped"  # a control token inside the call removed by detokenization
    COUNTER_ID = "counter_id"  # the native call id is only a counter: the name is not written
    STRING_ARGUMENTS = "string_arguments"  # `arguments` written as a JSON string holding the object
    SINGLE_OBJECT = "single_object"  # one call object where the format writes a list of calls
    AFTER_PROSE = "after_prose"  # calls of a format that opens the output with them written after prose
    NEWLINE_AFTER_END = "newline_after_end"  # a newline after each message's end token, before the next message


class Rule(Enum):
    """How the observed message is judged: exactly, or against a set of acceptable outcomes."""

    EXACT = "exact"
    TRUNCATED_ARGUMENTS = "truncated_arguments"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    MALFORMED_NEIGHBOUR = "malformed_neighbour"
    INFERRED_NAME = "inferred_name"
    TRUNCATED_NAME = "truncated_name"  # a call cut inside its name: the complete calls, nothing of the cut one
    NO_TOOL_CHOSEN = "no_tool_chosen"  # tool_choice "none": whatever the model writes, no call is returned
    ONE_CALL_ASKED = "one_call_asked"  # parallel_tool_calls false: the first call, or every call as written
    FORCED_FUNCTION = "forced_function"  # a named tool_choice: the call, finished "tool_calls" or (as OpenAI) "stop"


# filled by each family, see Family.placeholders: `markers` (marker text for an argument), `opener`/`closer`
# (reasoning), `quoted_call` (one complete call in the family's syntax), `stray` (a lone control marker that is
# not a start), `start` (the marker that opens a call or section), `history` (an earlier turn that reasoned and
# called, and the tool's result, as the family's template writes them up to the generation point)
PLACEHOLDERS = ("markers", "opener", "closer", "quoted_call", "stray", "start", "history")


@dataclass(frozen=True)
class Scenario:
    segments: tuple[Segment, ...]
    context: RequestContext
    truncation: Truncation = Truncation.NONE
    style: Style = Style.CANONICAL

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(s for s in self.segments if isinstance(s, Call))

    def specialize(self, values: dict[str, str]) -> Scenario:
        """Fill the family's own spellings into placeholders such as `{markers}`, `{opener}`, `{closer}`."""

        def fill(value: Any) -> Any:
            if isinstance(value, str):
                for key, text in values.items():
                    value = value.replace("{" + key + "}", text)
                return value
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            if isinstance(value, list):
                return [fill(v) for v in value]
            return value

        segments = tuple(
            dataclasses.replace(s, arguments=fill(s.arguments)) if isinstance(s, Call)
            else dataclasses.replace(s, text=fill(s.text)) if isinstance(s, Reasoning | Content)
            else dataclasses.replace(s, marker=fill(s.marker)) if isinstance(s, Stray)
            else s
            for s in self.segments
        )
        context = dataclasses.replace(self.context, prompt_tail=fill(self.context.prompt_tail))
        return dataclasses.replace(self, segments=segments, context=context)

    def with_context(self, **changes: Any) -> Scenario:
        return dataclasses.replace(self, context=dataclasses.replace(self.context, **changes))


@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # tool | reasoning | harmony
    title: str
    scenario: Scenario
    expected: str  # the catalog's wording of the expected result
    origin: str  # the bug class the case comes from
    rule: Rule = Rule.EXACT
    native_ids: bool = False  # compare tool-call ids exactly
    version: int = 1  # the catalog version that added the case
    # a request variant: what the client asks differs from this base case's request, and a family that does not
    # state a position of its own takes the one it holds on the base case (`Family.position`)
    variant_of: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("tool", "reasoning", "harmony") or not self.id.startswith(self.kind + "."):
            raise ValueError(f"case {self.id!r}: kind {self.kind!r} does not match its id")


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


GET_WEATHER = Tool(
    "get_weather",
    _object({"city": {"type": "string"}, "days": {"type": "integer"}}, ("city",)),
    "Weather forecast for a city.",
)
GET_TIME = Tool("get_time", _object({"tz": {"type": "string"}}, ("tz",)), "Current time in a time zone.")
SEARCH = Tool(
    "search", _object({"query": {"type": "string"}, "filters": {"type": "object"}}, ("query",)), "Web search."
)
NOOP = Tool("noop", _object({}), "Does nothing.")
CREATE_ISSUE = Tool(
    "mcp.github.create-issue_v2",
    _object({"title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}}, ("title",)),
    "An MCP tool whose name has dots, dashes, underscores and digits.",
)
CONFIGURE = Tool(
    "configure",
    _object(
        {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean"},
            "meta": {"type": "object"},
            "tags": {"type": "array"},
            "code": {"type": "string"},
            "note": {"type": ["string", "null"]},
        }
    ),
    "Values of every JSON type, for formats whose values are untyped text.",
)
_PYTHON_TYPE_NAMES = {"integer": "int", "number": "float", "boolean": "bool", "object": "dict", "array": "list",
                      "string": "str"}


def _python_typed(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter schema with its JSON Schema type names spelled as Python spells them (`null` stays)."""
    kind = schema["type"]
    named = [_PYTHON_TYPE_NAMES.get(k, k) for k in kind] if isinstance(kind, list) else _PYTHON_TYPE_NAMES[kind]
    return {**schema, "type": named}


CONFIGURE_PYTHON_TYPES = Tool(
    "configure",
    _object({**{name: _python_typed(schema) for name, schema in CONFIGURE.parameters["properties"].items()},
             "scale": {"type": "double"}}),
    "CONFIGURE's parameters typed with Python's names, as tool definitions written by hand or from annotations "
    "declare them, and one typed double (C's and Java's name, which generated definitions carry): outside JSON "
    "Schema, and in real requests.",
)

SCHEDULE = Tool(
    "schedule",
    _object(
        {
            "retries": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},  # Optional[int]
            "enabled": {"type": ["boolean", "null"]},
            "ratio": {"oneOf": [{"type": "number"}, {"type": "boolean"}]},
            "options": {"anyOf": [{"type": "object", "additionalProperties": True}, {"type": "null"}]},
            "when": {"type": ["string", "null"]},
            "skip": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "items": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
        },
        ("when",),
    ),
    "Parameters typed as Pydantic writes Optional and union fields: anyOf, oneOf and type lists.",
)
ANNOTATE = Tool(
    "annotate",
    _object({"text": {"type": "string"}, "label": {"type": "string"}, "flag": {"type": "string"},
             "empty": {"type": "string"}}, ("text",)),
    "String parameters whose values look like other JSON types.",
)

DEFAULT_TOOLS = (GET_WEATHER, GET_TIME, SEARCH, NOOP)
DEFAULT = RequestContext(tools=DEFAULT_TOOLS)

PARIS = Call("get_weather", {"city": "Paris", "days": 3})
CONFIGURE_CALL = Call("configure", {"count": 7, "ratio": 0.5, "enabled": True, "meta": {"a": [1, 2]}, "tags": ["x", "y"],
                                    "code": "42", "note": None})
CONFIGURE_CALL_TYPE_NAMES = Call("configure", {**CONFIGURE_CALL.arguments, "scale": 2.5})  # and the double
TOKYO_TIME = Call("get_time", {"tz": "Asia/Tokyo"})
UTC_TIME = Call("get_time", {"tz": "UTC"})
THOUGHT = "The user wants the weather in Paris, so I should call get_weather."
EARLIER_THOUGHT = "I need the forecast first."  # the reasoning of an earlier turn, in the prompt
ANSWER = "It will be sunny in Paris."

LONG_QUERY = "".join(f"line {i:05d}: the quick brown fox jumps over the lazy dog.\n" for i in range(400))[:16384]
COMPLEX_ARGUMENTS: dict[str, Any] = {
    "query": 'naïve café 東京 🌦️ שלום עולם\nsecond line\ttabbed "quoted" back\\slash /',
    "filters": {
        "nested": {"list": [1, -2, 3.5, -0.25, 1e-07, 6.02e23, True, False, None], "empty": {}, "none": []},
        "count": -42,
        "flag": True,
        "missing": None,
        "emoji": "👩‍💻",
    },
}


def _scenario(*segments: Segment, context: RequestContext = DEFAULT, **kw: Any) -> Scenario:
    """The request enables thinking exactly when the output reasons.

    A thinking model on a thinking-enabled request always opens reasoning (or its template
    prefills the opener), so an output without reasoning comes from a request with thinking off.
    """
    thinking = any(isinstance(s, Reasoning) for s in segments)
    return Scenario(tuple(segments), dataclasses.replace(context, thinking=thinking), **kw)


_TOOL_TURN = (  # the conversation reasoning.stale_closer continues: a turn that reasoned and called, and the result
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": EARLIER_THOUGHT, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'},
)
_HISTORY = (
    {"role": "user", "content": "Weather in Paris and time in Tokyo, then file an issue."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "functions.get_time:1",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"tz": "Asia/Tokyo"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "sunny"},
    {"role": "tool", "tool_call_id": "functions.get_time:1", "content": "09:00"},
)

TOOL_CASES = (
    Case("tool.single", "tool", "one call", _scenario(PARIS),
         "1 call, exact name and arguments; empty content", "baseline"),
    Case("tool.parallel", "tool", "two calls", _scenario(PARIS, TOKYO_TIME),
         "both, in order, indexes 0 and 1, distinct ids", "second call dropped or merged"),
    Case("tool.duplicate", "tool", "same call twice", _scenario(UTC_TIME, UTC_TIME),
         "two calls, distinct ids", "deduplication by content"),
    Case("tool.none", "tool", "no tool markup",
         _scenario(Content(
             "Compare with `a < b` and `c > d`; sets {1, 2} and lists [3, 4].\n"
             '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n'
             "Brackets [like this] and braces {like that} are just text.")),
         "zero calls; content verbatim", "JSON-looking text taken for a call"),
    Case("tool.empty_args", "tool", "call without arguments", _scenario(Call("noop", {})),
         "the call, arguments {} (not \"\", not dropped)", "empty arguments dropped or \"\""),
    Case("tool.complex_args", "tool", "every JSON value kind", _scenario(Call("search", COMPLEX_ARGUMENTS)),
         "arguments equal as JSON values", "escaping, unicode and number handling"),
    Case("tool.marker_in_args", "tool", "markers as literal argument text",
         _scenario(Call("search", {"query": "how do I parse {markers} in text?"})),
         "arguments exact", "marker search ignores JSON string context"),
    Case("tool.long_args", "tool", "16 KiB argument", _scenario(Call("search", {"query": LONG_QUERY})),
         "exact; also timed", "quadratic re-parsing, buffer limits"),
    Case("tool.content_before", "tool", "narration then call",
         _scenario(Content("Let me look that up for you."), PARIS),
         "content = narration; the call", "narration swallowed by the call parser"),
    Case("tool.content_after", "tool", "call then narration",
         _scenario(PARIS, Content("I asked for the forecast.")),
         "the call; content = trailing narration (not dropped)", "trailing text lost"),
    Case("tool.content_between", "tool", "call, narration, call",
         _scenario(PARIS, Content("Now the time as well."), TOKYO_TIME),
         "both calls; content = narration", "second section ignored"),
    Case("tool.missing_end", "tool", "section end missing (max_tokens / EOS)",
         _scenario(PARIS, TOKYO_TIME, truncation=Truncation.SECTION_END),
         "calls recovered; no markup in content", "calls silently dropped when max_tokens cuts the end marker"),
    Case("tool.truncated_args", "tool", "stops inside the arguments",
         _scenario(PARIS, Call("get_time", {"tz": "Europe/Amsterdam"}), truncation=Truncation.IN_ARGUMENTS),
         "no crash, no markup in content; the fragment as content or as a call's arguments; the earlier call kept",
         "crash or loss of the earlier call", rule=Rule.TRUNCATED_ARGUMENTS),
    Case("tool.malformed_args", "tool", "invalid JSON inside complete markers",
         _scenario(Call("get_weather", {}, raw_arguments="{\"city\": 'Paris', days: 3,}")),
         "no crash, no silent loss: a call with the raw argument text, or the text as content",
         "exceptions swallow the whole response", rule=Rule.MALFORMED_ARGUMENTS),
    Case("tool.unknown_tool", "tool", "call to an undeclared tool",
         _scenario(Call("delete_files", {"path": "/tmp/cache"})),
         "no crash, no silent loss: a call or content (recorded)", "undeclared tools dropped silently",
         rule=Rule.UNKNOWN_TOOL),
    Case("tool.name_chars", "tool", "dots, dashes, underscores, digits in the name",
         _scenario(Call(CREATE_ISSUE.name, {"title": "Crash on start"}),
                   context=RequestContext(tools=(*DEFAULT_TOOLS, CREATE_ISSUE))),
         "the exact name", "names cut at dots or rejected by a regex"),
    Case("tool.native_id", "tool", "native ids late in a conversation",
         _scenario(Call("get_weather", {"city": "Paris", "days": 3}, native_index=2),
                   Call(CREATE_ISSUE.name, {"title": "Forecast wrong"}, native_index=3),
                   context=RequestContext(tools=(*DEFAULT_TOOLS, CREATE_ISSUE), history=_HISTORY)),
         "ids exactly as the model wrote them", "native ids rewritten (multi-turn tool calling breaks)",
         native_ids=True),
    Case("tool.whitespace", "tool", "extra whitespace", _scenario(PARIS, TOKYO_TIME, style=Style.WHITESPACE),
         "same result as the compact form", "regexes without \\s*"),
    Case("tool.marker_variants", "tool", "alternate marker spellings",
         _scenario(PARIS, TOKYO_TIME, style=Style.VARIANT),
         "same result as the canonical spelling", "only one spelling recognized"),
    Case("tool.empty_section", "tool", "empty section",
         _scenario(Content("Nothing to call."), EmptySection(), Content("Done.")),
         "zero calls; surrounding text preserved", "empty section crashes or eats text"),
    Case("tool.schema_types", "tool", "untyped values typed by the schema",
         _scenario(CONFIGURE_CALL, context=RequestContext(tools=(*DEFAULT_TOOLS, CONFIGURE))),
         "values typed by the declared schema; a string stays a string", "\"42\" becomes 42, true becomes \"true\""),
    Case("tool.entities", "tool", "&, < and &lt; in XML values",
         _scenario(Call("search", {"query": "fish & chips < 5 &lt;b&gt; AT&amp;T"})),
         "the family's documented rule", "entities decoded twice or not at all"),
)

TOOL_CASES_V2 = (
    Case("tool.schema_union", "tool", "values typed by anyOf, oneOf and type lists",
         _scenario(Call("schedule", {"retries": 5, "enabled": True, "ratio": 2.5, "options": {"a": [1, None]},
                                     "when": "tomorrow", "skip": None, "items": [1, 2]}),
                   context=RequestContext(tools=(*DEFAULT_TOOLS, SCHEDULE))),
         "each value typed by the first non-string type of its anyOf / oneOf / type list that accepts it, "
         "else a string", "Optional[int] stays \"5\"; a nullable object stays text or is encoded twice",
         version=2),
    Case("tool.string_like_json", "tool", "string values that look like JSON",
         _scenario(Call("annotate", {"text": '{"a": 1}', "label": "[1, 2]", "flag": "true", "empty": "null"}),
                   context=RequestContext(tools=(*DEFAULT_TOOLS, ANNOTATE))),
         "every value stays the string it is: the schema says string", "text that parses as JSON is typed anyway",
         version=2),
    Case("tool.stray_marker", "tool", "a lone control marker outside any section",
         _scenario(Content("Sure."), Stray("{stray}"), Content(" The forecast needs no tool.")),
         "zero calls; content = the narration without the marker", "stray markers leak into content",
         version=2),
    Case("tool.false_start", "tool", "a call start followed by prose, not a call",
         _scenario(Content("Let me think."), Stray("{start}"), Content("No tool is needed: it is sunny.")),
         "zero calls; content = the narration without the marker; nothing lost",
         "the text after a start marker dropped, or the marker left in content", version=2),
    Case("tool.malformed_neighbour", "tool", "a malformed call next to a good one",
         _scenario(PARIS, Call("get_time", {}, raw_arguments='{"tz": Asia/Tokyo}')),
         "the good call kept; the bad one as a call with its raw argument text, or its own text as content",
         "one bad call loses the good one, or comes back half-converted", rule=Rule.MALFORMED_NEIGHBOUR,
         version=2),
    Case("tool.escaped_quote_marker", "tool", "an escaped quote followed by marker text in a string",
         _scenario(Call("search", {"query": 'She typed "{markers}" and "}" then left.'})),
         "arguments exact", "a string scanner that ends the string at an escaped quote", version=2),
    Case("tool.unbalanced_brackets", "tool", "unbalanced brackets inside string arguments",
         _scenario(Call("search", {"query": "close ) } ] before ( [ { opens", "filters": {"a)": "}", "b": "]"}})),
         "arguments exact", "bracket counting that ignores strings", version=2),
    Case("tool.leading_whitespace", "tool", "a newline before the first call",
         _scenario(PARIS, TOKYO_TIME, style=Style.LEADING_WHITESPACE),
         "same result as without it; content empty", "a bare call list recognized only at offset 0", version=2),
    Case("tool.no_arguments", "tool", "a call with no argument section at all",
         _scenario(Call("noop", {}), style=Style.NO_ARGUMENTS),
         "the call, arguments {}", "a call without arguments dropped, or arguments \"\" or null", version=2),
    Case("tool.unwrapped", "tool", "calls written without their wrapper",
         _scenario(PARIS, TOKYO_TIME, style=Style.UNWRAPPED),
         "both calls, as if wrapped", "bare `<function=…>` blocks left in content", version=2),
    Case("tool.control_skipped", "tool", "a control token inside the call skipped by detokenization",
         _scenario(PARIS, style=Style.CONTROL_SKIPPED),
         "the call, as if the token were there", "`[TOOL_CALLS]name{json}` without `[ARGS]` not recognized",
         version=2),
    Case("tool.counter_id", "tool", "a native id that is only a counter",
         _scenario(PARIS, style=Style.COUNTER_ID),
         "the call, named by the one declared tool whose parameters fit its arguments; or its text as content",
         "the call silently dropped", rule=Rule.INFERRED_NAME, version=2),
    Case("tool.string_arguments", "tool", "arguments written as a JSON string",
         _scenario(PARIS, style=Style.STRING_ARGUMENTS),
         "arguments = the object the string holds (not the string, not encoded twice)",
         "arguments double-encoded", version=2),
    Case("tool.single_object", "tool", "one call object where a list is expected",
         _scenario(PARIS, style=Style.SINGLE_OBJECT),
         "the call", "a lone object after the start marker dropped or left in content", version=2),
    Case("tool.after_prose", "tool", "calls after prose, in a format that usually opens with them",
         _scenario(Content("Let me check the forecast."), PARIS, style=Style.AFTER_PROSE),
         "content = the prose; the call", "calls recognized only at the start of the output", version=2),
    Case("tool.content_in_section", "tool", "call, narration, call, all inside one tool section",
         _scenario(PARIS, Content("And now the time.", in_section=True), TOKYO_TIME),
         "both calls; content = the narration, its words intact",
         "narration inside a section dropped, or its spaces lost while streaming", version=3),
)

REASONING_CASES = (
    Case("reasoning.only", "reasoning", "reasoning then answer", _scenario(Reasoning(THOUGHT), Content(ANSWER)),
         "reasoning r, content answer, no calls", "baseline"),
    Case("reasoning.prefilled", "reasoning", "opener in the prompt",
         _scenario(Reasoning(THOUGHT), Content(ANSWER)).with_context(prompt_tail="{opener}"),
         "reasoning r, content answer", "reasoning leaks into content when the opener is in the prompt"),
    Case("reasoning.empty", "reasoning", "empty reasoning block (thinking off)",
         _scenario(Content(ANSWER)).with_context(prompt_tail="{opener}\n\n{closer}\n\n"),
         "no reasoning, content answer", "answer taken for reasoning when thinking is off"),
    Case("reasoning.unterminated", "reasoning", "reasoning never closes",
         _scenario(Reasoning(THOUGHT + " Still thinking about the best"), truncation=Truncation.REASONING_UNCLOSED),
         "reasoning = all of it, empty content, no markup anywhere", "unterminated reasoning shown as content"),
    Case("reasoning.then_tool", "reasoning", "reasoning then a call", _scenario(Reasoning(THOUGHT), PARIS),
         "reasoning and the call", "call left inside reasoning"),
    Case("reasoning.then_content_and_tool", "reasoning", "reasoning, narration, call",
         _scenario(Reasoning(THOUGHT), Content("Checking the forecast."), PARIS),
         "all three", "narration lost between reasoning and call"),
    Case("reasoning.implicit_end", "reasoning", "reasoning ended by the tool section",
         _scenario(Reasoning(THOUGHT), PARIS, truncation=Truncation.REASONING_UNCLOSED)
         .with_context(prompt_tail="{opener}"),
         "reasoning = text before the section; the call", "reasoning swallows the tool call"),
    Case("reasoning.tool_inside", "reasoning", "complete call inside unclosed reasoning",
         _scenario(Reasoning("I need the forecast first."), PARIS, truncation=Truncation.REASONING_UNCLOSED),
         "the call is extracted; reasoning = the text before it; no markup in reasoning",
         "tool call hidden in reasoning_content"),
    Case("reasoning.interleaved", "reasoning", "reasoning, call, reasoning, call",
         _scenario(Reasoning("First the weather."), PARIS, Reasoning("Now the time in Tokyo."), TOKYO_TIME),
         "both calls in order; reasoning = both reasoning texts in order", "second reasoning block as content"),
    Case("reasoning.marker_text_in_content", "reasoning", "closer quoted in the answer",
         _scenario(Reasoning("Explain the markers."), Content("Close the block with `{closer}` on its own line.")),
         "content verbatim", "literal marker text re-parsed after reasoning ended"),
)

REASONING_CASES_V2 = (
    Case("reasoning.quoted_call", "reasoning", "call markup quoted inside reasoning that later closes",
         _scenario(Reasoning("The format is {quoted_call} but I must check first. Now I know."), PARIS),
         "reasoning = all of it, the quoted markup included; one call (the one after the closer)",
         "the quoted call executed and the rest of the reasoning moved to content", version=2),
    Case("reasoning.reopened", "reasoning", "opener written again after the prompt prefilled it",
         _scenario(Reasoning(THOUGHT), Content(ANSWER), style=Style.REOPENED).with_context(prompt_tail="{opener}"),
         "reasoning r (no opener in it), content answer", "the second opener leaks into reasoning", version=2),
    Case("reasoning.leading_whitespace", "reasoning", "a newline before the reasoning opener",
         _scenario(Reasoning(THOUGHT), Content(ANSWER), style=Style.LEADING_WHITESPACE),
         "reasoning r, content answer", "an opener recognized only at offset 0", version=2),
)

HARMONY_CASES = (
    Case("harmony.channels", "harmony", "analysis, preamble, final",
         _scenario(Reasoning(THOUGHT), Content("Let me check.", preamble=True), Content(ANSWER)),
         "reasoning = analysis; content = preamble + final", "commentary preamble dropped"),
    Case("harmony.call_after_analysis", "harmony", "analysis then a call", _scenario(Reasoning(THOUGHT), PARIS),
         "reasoning and the call", "call lost after an analysis message"),
    Case("harmony.missing_call_end", "harmony", "call cut before <|call|>",
         _scenario(Reasoning(THOUGHT), PARIS, truncation=Truncation.SECTION_END),
         "the call recovered or an explicit error; no markup in content", "call dropped without <|call|>"),
)

# catalog v3: output the engines meet in practice (issue 24, part 4)
FORMAT_VARIANTS = (
    Case("tool.truncated_header", "tool", "stops inside a call's name",
         _scenario(PARIS, Call("get_time", {"tz": "Europe/Amsterdam"}), truncation=Truncation.IN_NAME),
         "the earlier call; nothing of the cut call: no call named by the fragment, none of its markup in content",
         "partial call markup shown as content, or a call made to a truncated name, when max_tokens cuts a call "
         "header", rule=Rule.TRUNCATED_NAME, version=3),
    Case("harmony.newline_after_end", "harmony", "a newline after each message's end token",
         _scenario(Reasoning(THOUGHT), Content("Checking the forecast.", preamble=True), PARIS,
                   style=Style.NEWLINE_AFTER_END),
         "reasoning, the preamble as content and the call: whitespace between two messages belongs to neither",
         "the message after the newline read as text of the one before (its header in reasoning or content, the "
         "call lost), or the output rejected", version=3),
)

# catalog v3: what the client asks varies, not only what the model writes (issue 24)
REQUEST_VARIANTS = (
    Case("reasoning.flag_absent", "reasoning", "thinking closed by the template, no thinking flag in the request",
         _scenario(Content(ANSWER)).with_context(prompt_tail="{opener}\n\n{closer}\n\n", thinking=None),
         "no reasoning, content answer (as reasoning.empty)",
         "the answer taken for reasoning, and hidden with include_reasoning=false, when the request leaves the "
         "thinking flag to the template (vLLM #53284)", version=3, variant_of="reasoning.empty"),
    Case("reasoning.stale_closer", "reasoning", "an earlier turn's closed think block and call in the prompt",
         _scenario(Reasoning(THOUGHT), Content(ANSWER)).with_context(prompt_tail="{history}", history=_TOOL_TURN),
         "reasoning r, content answer (as reasoning.only)",
         "the earlier turn's closer (or, where the template drops its reasoning, its call opener) taken to end the "
         "new turn's reasoning, which then comes out as content (vLLM #32490, #41696, #54089)", version=3,
         variant_of="reasoning.only"),
    Case("tool.choice_none", "tool", "a call written although the request says tool_choice \"none\"",
         _scenario(PARIS).with_context(tool_choice="none"),
         "no tool call; the text after any reasoning as content, markup and all; finish_reason stop",
         "a call returned although the client asked for none, or the markup lost: with tools declared and "
         "tool_choice \"none\" the server must not call a tool (OpenAI: the model \"will not call any tool and "
         "instead generates a message\"), and a model can still write a call", rule=Rule.NO_TOOL_CHOSEN, version=3,
         variant_of="tool.single"),
    Case("tool.choice_required", "tool", "one call written under tool_choice \"required\"",
         _scenario(PARIS).with_context(tool_choice="required"),
         "the call, no content, finish_reason tool_calls (as tool.single), from the text the engine's constraint has "
         "the model write: its own markup, or the generic JSON array an engine's schema asks for",
         "the call lost, returned as content or as an empty list, or the request failed, when the client forces a "
         "call: a forced choice takes another extraction path than \"auto\", and where the engine constrains the "
         "output to a generic JSON shape, that shape is what the model writes (vLLM #53363, #49216, #55754; Dynamo "
         "#9804)", version=3, variant_of="tool.single"),
    Case("tool.choice_named", "tool", "one call written under a tool_choice naming its function",
         _scenario(PARIS).with_context(tool_choice=NamedChoice("get_weather")),
         "the call, no content; finish_reason tool_calls, or stop as OpenAI answers a named choice; from the text the "
         "engine's constraint has the model write (its own markup, a JSON array of calls, or the arguments alone)",
         "the call lost or its arguments mangled when the client names the function to call: a named choice takes "
         "another extraction path than \"auto\", and where the engine constrains the output to the function's "
         "parameters, the arguments object alone is what the model writes (vLLM #50477; Dynamo #13240)",
         rule=Rule.FORCED_FUNCTION, version=3, variant_of="tool.single"),
    Case("tool.parallel_disabled", "tool", "two calls written although the request says parallel_tool_calls false",
         _scenario(PARIS, TOKYO_TIME).with_context(parallel_tool_calls=False),
         "the first call alone (the second dropped whole, none of its markup in content), or both calls as written",
         "the second call merged into the first, leaked into content as markup, or kept in one path and dropped in "
         "the other: the flag asks the model for one call at most, and a server may enforce it on the output (keep "
         "the first) or leave the output as the model wrote it; the spec says which calls the model makes, not what "
         "a server does with a second one", rule=Rule.ONE_CALL_ASKED, version=3, variant_of="tool.parallel"),
    Case("tool.schema_type_names", "tool", "untyped values typed by a schema that names types as Python and C do",
         _scenario(CONFIGURE_CALL_TYPE_NAMES, context=RequestContext(tools=(*DEFAULT_TOOLS, CONFIGURE_PYTHON_TYPES))),
         "the values of tool.schema_types, and scale: int, float and double are numbers, bool a boolean, dict and "
         "list JSON, str a string (\"42\" stays a string)",
         "values left as strings, or the request refused, when a tool declares int, float, double, bool, dict, list "
         "or str "
         "(type names outside JSON Schema that real tool definitions use)", version=3,
         variant_of="tool.schema_types"),
)

CATALOG: tuple[Case, ...] = (TOOL_CASES + REASONING_CASES + HARMONY_CASES + TOOL_CASES_V2 + REASONING_CASES_V2
                             + FORMAT_VARIANTS + REQUEST_VARIANTS)
CASES: dict[str, Case] = {c.id: c for c in CATALOG}

if len(CASES) != len(CATALOG):  # pragma: no cover - guards the literal above
    raise ValueError("duplicate case id in the catalog")


def case(case_id: str) -> Case:
    try:
        return CASES[case_id]
    except KeyError:
        raise KeyError(f"unknown case id {case_id!r}; known: {', '.join(CASES)}") from None
