"""Catalog v3's defects: state that outlives one request. Each is the reference with one thing changed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from contract.cases.family import Family, ReasoningStyle, Sample
from contract.cases.forced import ForcedText
from contract.cases.model import NamedChoice, RequestContext
from parsers.reference.families import grammar
from parsers.reference.machine import Grammar, Machine, State

from .defects import Defect, Miniature

_SHARED: dict[str, State] = {}  # the module global every session reads and writes


class _GlobalState(Machine):
    """The reference machine whose state (start, reasoning, content, section) lives in a module global: a
    request alone never notices, two at once each switch the other's."""

    @property  # type: ignore[override]
    def state(self) -> State:
        return _SHARED["state"]

    @state.setter
    def state(self, value: State) -> None:
        _SHARED["state"] = value


class KeepsStateInModuleGlobal(Defect):
    """Opening a stream resets the global, as a shared instance's `reset()` at each request would."""

    family = "kimi_k2"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _GlobalState(grammar(family.name), family.reasoning, context)


class _ThinkingByDefault(Machine):
    """Starts inside reasoning when the request sends no thinking flag, whatever the prompt says."""

    def __init__(self, grammar: Grammar, reasoning: ReasoningStyle | None, context: RequestContext) -> None:
        super().__init__(grammar, reasoning, context)
        if reasoning is not None and context.thinking is None:
            self.state = State.REASONING


class AssumesThinkingWithoutFlag(Defect):
    """Reads thinking from the request's flag alone and takes it on when the flag is absent (vLLM #53284)."""

    family = "kimi_k2"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _ThinkingByDefault(grammar(family.name), family.reasoning, context)


class IgnoresToolChoice(Defect):
    """Parses calls whatever the request's tool_choice says: under "none" a call the model writes is returned."""

    family = "kimi_k2"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return Machine(grammar(family.name), family.reasoning, dataclasses.replace(context, tool_choice="auto"))


class _LooksBackThroughPrompt(Machine):
    """Where the last reasoning marker in the prompt is a closer, takes reasoning to be over before the output starts
    and reads all of it as content, think block and all, as a server does whose reasoning parser scans the prompt
    back without stopping at the current turn (vLLM's `is_reasoning_end`): calls are still parsed."""

    def __init__(self, grammar: Grammar, reasoning: ReasoningStyle | None, context: RequestContext) -> None:
        tail = context.prompt_tail
        ended = reasoning is not None and tail.rfind(reasoning.closer) > tail.rfind(reasoning.opener)
        super().__init__(grammar, None if ended else reasoning, context)


class ReadsPromptsLastCloser(Defect):
    """Takes an earlier turn's closer in the prompt to end the new turn's reasoning (vLLM #32490, #54089)."""

    family = "kimi_k2"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _LooksBackThroughPrompt(grammar(family.name), family.reasoning, context)


@dataclass(frozen=True)
class _ConstrainedToJson(Miniature):
    """A server whose forced tool_choice constrains the output to a generic JSON shape: the array of calls, or a
    named choice's arguments alone."""

    def forced_text(self, sample: Sample) -> ForcedText:
        return ForcedText.JSON_ARGUMENTS if isinstance(sample.context.tool_choice, NamedChoice) else ForcedText.JSON_CALLS


class ReadsMarkupUnderJsonConstraint(Defect):
    """Runs the family's markup parser on the JSON its own constraint had the model write under a forced choice,
    where the server should parse that JSON: the calls come out as content (vLLM #53363, Dynamo #9804)."""

    family = "kimi_k2"
    miniature = _ConstrainedToJson


V3: dict[str, Defect] = {
    "keeps_state_in_module_global": KeepsStateInModuleGlobal(),
    "assumes_thinking_without_flag": AssumesThinkingWithoutFlag(),
    "ignores_tool_choice": IgnoresToolChoice(),
    "reads_prompts_last_closer": ReadsPromptsLastCloser(),
    "reads_markup_under_json_constraint": ReadsMarkupUnderJsonConstraint(),
}
