"""Wire-format families and the four states of a (family, case) position.

A family declares its markers, which of them are single tokens, its reasoning style, its native
id scheme, a grammar renderer, and a position on every case of the catalog: `Render` (a Sample
is produced) or `NotApplicable(reason)`. A case the family is silent on is `Unimplemented`,
a hard failure. (`KnownBroken`, the fourth state, is about a parser, see `contract.expectations`.)
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .catalog import (
    CATALOG,
    EARLIER_THOUGHT,
    Call,
    Case,
    Content,
    Reasoning,
    Scenario,
    Stray,
    Style,
    Truncation,
)
from .expected import Expected, NativeId, derive, generation_stop, native_id, reasoning_kept_in_content
from .forced import Written, forced_rendering
from .model import RequestContext
from .rendering import Kind, Rendered, Role, Span, TextBuilder, truncate

if TYPE_CHECKING:  # a family names its vocabulary; the streams stage loads it
    from ..streams.vocabulary import Vocabulary


REAL, SYNTHETIC = "real", "synthetic"
TIERS = (REAL, SYNTHETIC)  # vocabulary tiers: a run tokenizes its families' samples in one (`Family.in_tier`)


def ends_with_opener(prompt_tail: str, opener: str) -> bool:
    """The prompt ends with the reasoning opener, or with it and the newline a template writes after it."""
    return prompt_tail.endswith(opener) or prompt_tail.rstrip().endswith(opener)


@dataclass(frozen=True)
class ReasoningStyle:
    opener: str
    closer: str
    implicit_end: tuple[str, ...] = ()  # markers that end reasoning without a closer
    interleaved: bool = False  # reasoning may reopen after a tool call
    template_prefills: bool = False  # the chat template ends every thinking prompt with the opener
    # the model cannot turn reasoning off (MiniMax-M2, Step-3, ERNIE-4.5 thinking): every prompt ends with
    # the opener, thinking requested or not, and an answer without reasoning follows an empty block
    always_reasons: bool = False

    def prefilled(self, context: RequestContext) -> bool:
        """The request enables thinking (or the model always reasons) and its prompt ends with the opener (and
        perhaps the newline a template writes after it): output starts inside reasoning."""
        return bool(context.thinking or self.always_reasons) and ends_with_opener(context.prompt_tail, self.opener)

    def prompt(self, scenario: Scenario) -> Scenario:
        """The scenario as the family's template prompts it: where the template always prefills the
        opener, a thinking request with no other prompt tail ends with the opener."""
        context = scenario.context
        if (self.always_reasons or self.template_prefills and context.thinking) and not context.prompt_tail:
            return scenario.with_context(prompt_tail=self.opener)
        return scenario


@dataclass(frozen=True)
class History:
    """How the family's chat template writes the conversation before a turn that follows a tool result: an
    earlier assistant turn (its think block closed, one call) and the tool's result, up to the generation point.

    `next_turn` is the text from the end of the earlier turn's call (as the family renders it) to where the new
    turn starts generating, with `{"temp": 21}` as the result; it ends with the opener where the template
    prefills it. `keeps_reasoning`: the template writes the earlier turn's think block back (so its closer is in
    the prompt); where it drops it, the earlier call's opener is the stale marker the prompt still holds."""

    next_turn: str
    keeps_reasoning: bool
    source: str  # the template (or encoder) `next_turn` was read from
    turn_start: str = ""  # what the template writes before the earlier turn's content, where that holds a marker


@dataclass(frozen=True)
class Render:
    """The family renders the case; `note` says what the Sample means for this format."""

    note: str = ""


@dataclass(frozen=True)
class NotApplicable:
    reason: str

    def __post_init__(self) -> None:
        reason = self.reason.strip()
        if len(reason) < 10 or re.match(r"(todo|tbd|fixme|xxx|placeholder)\b", reason, re.IGNORECASE):
            raise ValueError(f"NotApplicable needs an honest reason, not a placeholder: {self.reason!r}")


@dataclass(frozen=True)
class Unimplemented:
    family: str
    case: str

    @property
    def reason(self) -> str:
        return f"family {self.family!r} takes no position on case {self.case!r}"


Position = Render | NotApplicable

Renderer = Callable[[Scenario, TextBuilder], None]


def every(kind: str, position: Position) -> dict[str, Position]:
    """The same position on every case of one kind: `**every("harmony", NotApplicable("no channels"))`."""
    return {c.id: position for c in CATALOG if c.kind == kind}


@dataclass(frozen=True)
class Sample:
    family: str
    case: Case
    scenario: Scenario  # the case's scenario with the family's spellings filled in
    rendered: Rendered
    stop: str  # how generation ended: "stop" or "length"
    expected: Expected
    note: str = ""

    @property
    def text(self) -> str:
        return self.rendered.text

    @property
    def context(self) -> RequestContext:
        return self.scenario.context

    def written_as(self, shape: Written) -> Sample:
        """The sample as the model writes it under a forced choice whose constraint asks for `shape` (its calls and
        expected message unchanged)."""
        return dataclasses.replace(self, rendered=forced_rendering(self.rendered, self.scenario.calls, shape))

    def with_reasoning_in_content(self, style: ReasoningStyle) -> Sample:
        """The sample as graded for a parser that keeps the think block in content (MiniMax append-think)."""
        block = any(span.role is Role.REASONING_END for span in self.rendered.spans) or any(
            isinstance(s, Reasoning) for s in self.scenario.segments)
        expected = reasoning_kept_in_content(
            self.expected, self.rendered, style.opener, block=block,
            closed=self.scenario.truncation is not Truncation.REASONING_UNCLOSED)
        return dataclasses.replace(self, expected=expected)


LEADING_WHITESPACE = "\n  "  # what Style.LEADING_WHITESPACE puts before the output


def _lead(rendered: Rendered, prefix: str) -> Rendered:
    """The rendering with `prefix` (markup: whitespace a parser may drop) before it."""
    shifted = tuple(s.shifted(len(prefix)) for s in rendered.spans)
    return Rendered(prefix + rendered.text, (Span(0, len(prefix), Kind.MARKUP), *shifted))


@dataclass(frozen=True, eq=False)  # a family's data: identity, hashable
class ResponseTemplate:
    """The declarative `response_template` a model's `tokenizer_config.json` carries (the schema of
    transformers' `ResponseParser`), which template-driven parsers (vLLM `hf`/`beam`, SGLang
    `response_template`/`beam`) parse by, and the chat template's prompt it parses after.

    The families write theirs from the template `transformers serve` 5.23.0 falls back to for the model type
    (cli/serving/utils.py), with the reasoning field named `thinking`, which transformers reads too: vLLM and
    SGLang serve only `thinking`, `content` and `tool_calls` and reject the fallback's `reasoning_content`."""

    template: Mapping[str, Any]  # the tokenizer config's `response_template` value, as JSON
    prompt: str  # the chat template's rendering of one user turn up to the generation point (its start anchor)
    source: str  # where it was written from


@dataclass(frozen=True, eq=False)  # registry objects: identity, hashable
class Family:
    name: str
    title: str
    markers: tuple[str, ...]  # every marker string, text-level ones included
    special_tokens: tuple[str, ...]  # markers that are single special tokens
    renderer: Renderer
    positions: Mapping[str, Position]
    marker_text: str  # the literal markup put into a string argument by tool.marker_in_args
    reasoning: ReasoningStyle | None = None
    added_tokens: tuple[str, ...] = ()  # single tokens that are not special (`"special": false`)
    native_ids: str = ""  # the native tool-call id scheme, "" if none
    native_id: NativeId = native_id  # the id a call with a native index is written with (Kimi K2's scheme unless given)
    entity_rule: str = ""  # how XML-like values treat &, < and entities
    corpus: str = field(default="", repr=False)  # extra text to train the family's synthetic tokenizer on
    vocabulary: Vocabulary | None = None  # the closest real vocabulary within reach; None: synthetic only
    stray_marker: str = ""  # `{stray}`: a control marker that, alone outside a section, means nothing
    start_marker: str = ""  # `{start}`: the marker that opens a call or tool section
    response_template: ResponseTemplate | None = None  # what its model's tokenizer config declares, if anything
    tier: str = REAL  # the vocabulary tier the family is graded in (`in_tier`): a run's setting, not the format's
    history: History | None = None  # how its template writes an earlier turn and a tool result (`{history}`)
    # the chat template's own single tokens the prompt holds (turn and role tokens: `<|im_start|>`): never output
    # markers, so never looked for in content; a synthetic vocabulary adds them as special tokens
    prompt_tokens: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"family {self.name!r}: key 'tier': {self.tier!r} is not one of {', '.join(TIERS)}")
        unknown = sorted(set(self.positions) - {c.id for c in CATALOG})
        if unknown:
            raise ValueError(f"family {self.name!r}: key 'positions': a position for case {unknown[0]!r}, "
                             "which is not in the catalog")
        for token in (*self.special_tokens, *self.added_tokens):
            if token not in self.markers:
                raise ValueError(f"family {self.name!r}: token {token!r} is not among its markers")

    @property
    def tiered(self) -> bool:
        """The real and synthetic vocabulary tiers grade the family on different tokens (it has a real one)."""
        return self.vocabulary is not None

    @property
    def graded_vocabulary(self) -> Vocabulary | None:
        """The real vocabulary the family's samples are tokenized with in its tier (None: the synthetic one)."""
        return self.vocabulary if self.tier == REAL else None

    def in_tier(self, tier: str) -> Family:
        """This family graded in `tier`: always the same object for the same tier, so what is cached per family
        (its tokenizer, its streams) is made once."""
        return _in_tier(self, tier)

    def position(self, case: Case) -> Position | Unimplemented:
        """The position the family states on the case; for a request variant it does not name, the one it holds
        on the variant's base case (the same output, asked for differently)."""
        stated = self.positions.get(case.id)
        if stated is None and case.variant_of is not None:
            stated = self.positions.get(case.variant_of)
        return stated or Unimplemented(self.name, case.id)

    def placeholders(self, case: Case | None = None) -> dict[str, str]:
        """The family's spellings of the catalog's placeholders; `quoted_call` only for a case that quotes a call
        (a family with no tool format, Kimi-VL's, has no call to quote)."""
        values = {"markers": self.marker_text}
        if case is None or "{quoted_call}" in repr(case.scenario):
            values["quoted_call"] = self.quoted_call()
        if self.reasoning:
            values |= {"opener": self.reasoning.opener, "closer": self.reasoning.closer}
        values |= {k: v for k, v in (("stray", self.stray_marker), ("start", self.start_marker)) if v}
        if self.history is not None and (case is None or "{history}" in repr(case.scenario)):
            values["history"] = self.earlier_turns()
        return values

    def prompt_end(self, context: RequestContext) -> str:
        """The end of the rendered prompt the output follows: the chat template's assistant turn where the family
        declares a response template (what template-driven parsers parse after), then the case's prompt tail."""
        return (self.response_template.prompt if self.response_template is not None else "") + context.prompt_tail

    def held_by_rule(self, case: Case) -> int:
        """Payload (non-space characters) the case makes any parser hold past the incremental bound's start: a
        call quoted inside reasoning, which only the reasoning's closer shows to be quoted (reasoning.quoted_call).
        Where the format's call alone is longer than the bound (PLaMo 3's markers), no parser could stream
        that case within it."""
        if "{quoted_call}" not in repr(case.scenario):
            return 0
        return sum(map(len, self.quoted_call().split()))

    def quoted_call(self) -> str:
        """One complete call in the family's own syntax, as a model thinking about the format would quote it."""
        builder = TextBuilder()
        self.renderer(Scenario((Call("get_time", {"tz": "UTC"}),), RequestContext(thinking=False)), builder)
        return builder.build().text.strip()

    def earlier_turns(self) -> str:
        """The prompt's end after an earlier turn that reasoned and called get_weather, and the tool's result:
        that turn as the family renders it (its think block only where the template keeps it), then
        `history.next_turn`."""
        assert self.history is not None
        call = Call("get_weather", {"city": "Paris"})
        segments = (Reasoning(EARLIER_THOUGHT), call) if self.history.keeps_reasoning else (call,)
        builder = TextBuilder()
        self.renderer(Scenario(segments, RequestContext(thinking=self.history.keeps_reasoning)), builder)
        return self.history.turn_start + builder.build().text.strip() + self.history.next_turn

    def _check_strays(self, case: Case, scenario: Scenario) -> None:
        for segment in scenario.segments:
            if isinstance(segment, Stray) and segment.marker not in self.markers:
                raise ValueError(f"fixtures/families/{self.name}.py, case {case.id}: field 'stray_marker' or "
                                 f"'start_marker': stray marker {segment.marker!r} is not one of the family's markers")

    def sample(self, case: Case) -> Sample | NotApplicable | Unimplemented:
        position = self.position(case)
        if not isinstance(position, Render):
            return position
        if self.history is None and "{history}" in repr(case.scenario):
            raise ValueError(f"fixtures/families/{self.name}.py, case {case.id}: field 'history': the case puts an "
                             "earlier turn in the prompt; give the template's `History` or a position on the case")
        scenario = case.scenario.specialize(self.placeholders(case))
        self._check_strays(case, scenario)
        if self.reasoning:
            scenario = self.reasoning.prompt(scenario)
        builder = TextBuilder()
        try:
            self.renderer(scenario, builder)
            rendered = truncate(builder.build(), scenario.truncation)
            if scenario.style is Style.LEADING_WHITESPACE:
                rendered = _lead(rendered, LEADING_WHITESPACE)
        except Exception as exc:
            raise ValueError(f"fixtures/families/{self.name}.py, case {case.id}: cannot render: {exc}") from exc
        lost = [s.text for s in scenario.segments if isinstance(s, Content) and s.text not in rendered.text]
        if lost and scenario.truncation is Truncation.NONE:
            raise ValueError(f"fixtures/families/{self.name}.py, case {case.id}: field 'renderer': the rendering "
                             f"leaves out the narration {lost[0]!r}")
        stop = generation_stop(scenario)
        expected = derive(case, scenario, rendered, stop, self.native_id)
        return Sample(self.name, case, scenario, rendered, stop, expected, position.note)


_TWINS: dict[tuple[int, str], Family] = {}  # (id of a family, tier) -> that family in the tier; both ways


def _in_tier(family: Family, tier: str) -> Family:
    if tier not in TIERS:
        raise ValueError(f"vocabulary tier {tier!r}: one of {', '.join(TIERS)}")
    if family.tier == tier:
        return family
    twin = _TWINS.get((id(family), tier))
    if twin is None:
        twin = _TWINS[(id(family), tier)] = dataclasses.replace(family, tier=tier)
        _TWINS[(id(twin), family.tier)] = family
    return twin


def in_tier(families: Mapping[str, Family], tier: str) -> dict[str, Family]:
    """A run's families (name -> `Family`) graded in one vocabulary tier."""
    return {name: family.in_tier(tier) for name, family in families.items()}


def load_families(module: str, tier: str = REAL) -> dict[str, Family]:
    """The families a module registers (`module.all_families()`, name -> `Family`), in a vocabulary tier: how
    a worker process gets the families its run was planned with (`fixtures` for this repository's)."""
    return in_tier(importlib.import_module(module).all_families(), tier)
