"""The defects. Each names the family it is graded on and breaks one thing."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contract.cases.family import Family
from contract.cases.model import Chunk, Delta, Message, RequestContext, ToolCallDelta
from contract.grading.assembly import assemble
from parsers.reference.families import grammar
from parsers.reference.machine import Machine


class Defect:
    family = "kimi_k2"
    in_batch = True  # False: one-shot parsing is the correct reference path

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return Machine(grammar(family.name), family.reasoning, context)

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        return deltas


class DropsTrailingText(Defect):
    """Content after the first tool call is lost."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        out = []
        for delta in deltas:
            state["called"] = state.get("called") or bool(delta.tool_calls)
            if state["called"] and delta.content:
                delta = dataclasses.replace(delta, content=None)
            out.append(delta)
        return out


class DropsWhitespaceDeltas(Defect):
    """Drops every content delta that is whitespace only (a client that skips "blank" deltas does the same): where
    the stream sends a space between two words on its own, the words merge ("And now" -> "Andnow")."""

    in_batch = False

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        return [dataclasses.replace(d, content=None) if d.content and not d.content.strip() else d for d in deltas]


class _NoHoldback(Machine):
    def _keep(self, markers: Sequence[str]) -> int:
        return 0


class LeaksSplitMarker(Defect):
    """Releases text without withholding a possible marker prefix: a marker split across deltas leaks."""

    family = "hermes"

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _NoHoldback(grammar(family.name), family.reasoning, context)


class _CallsOnSectionEnd(Machine):
    def _collect(self, ended: bool, named: int | None = None) -> None:
        if ended:
            super()._collect(ended, named)


class LosesCallsWithoutSectionEnd(Defect):
    """Announces calls only when the section end arrives, so a section cut by max_tokens yields none."""

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _CallsOnSectionEnd(grammar(family.name), family.reasoning, context)


class RewritesNativeIds(Defect):
    """Strips punctuation from ids: functions.get_weather:2 becomes functionsget_weather2."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        return [
            dataclasses.replace(d, tool_calls=tuple(
                dataclasses.replace(c, id=re.sub(r"\W", "", c.id)) if c.id else c for c in d.tool_calls))
            for d in deltas
        ]


class SwallowsCallInReasoning(Defect):
    """Knows no implicit end of reasoning: a tool section inside open reasoning stays reasoning text."""

    def machine(self, family: Family, context: RequestContext) -> Machine:
        assert family.reasoning is not None
        style = dataclasses.replace(family.reasoning, implicit_end=())
        return Machine(grammar(family.name), style, context)


class DuplicatesText(Defect):
    """While streaming, re-sends the previous content piece whenever a new one arrives in a later delta."""

    in_batch = False

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        out = []
        pieces = [d.content for d in deltas if d.content]
        if pieces and state.get("last"):
            out.append(Delta(content=state["last"]))
        if pieces:
            state["last"] = pieces[-1]
        return out + deltas


class Crashes(Defect):
    """Raises on a tool name with a dot (a name regex that does not allow one)."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        for delta in deltas:
            for call in delta.tool_calls:
                if call.name and "." in call.name:
                    raise ValueError(f"invalid tool name {call.name!r}")
        return deltas


class ArgumentsNotJson(Defect):
    """Writes arguments with single quotes, as Python's repr would."""

    family = "qwen3_coder"

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        def requote(call: ToolCallDelta) -> ToolCallDelta:
            return dataclasses.replace(call, arguments=call.arguments.replace('"', "'")) if call.arguments else call

        return [dataclasses.replace(d, tool_calls=tuple(requote(c) for c in d.tool_calls)) for d in deltas]


class _OnSunnyAnswer(Defect):
    """Misbehaves (`strike`) once the answer mentions the weather being sunny."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        state["text"] = state.get("text", "") + "".join(d.content or "" for d in deltas)
        if "sunny" in state["text"]:
            self.strike()
        return deltas

    def strike(self) -> None:
        raise NotImplementedError


class Hangs(_OnSunnyAnswer):
    """Loops forever in Python."""

    def strike(self) -> None:
        while True:
            pass


class HangsInNativeCode(_OnSunnyAnswer):
    """A catastrophically backtracking regex: the time goes inside the regex engine (C), where no
    Python-level deadline can interrupt it."""

    def strike(self) -> None:
        re.fullmatch(r"(?:a+)+b", "a" * 64)


class Aborts(_OnSunnyAnswer):
    """Kills the interpreter (as a segfault or a failed C assertion in an extension would)."""

    def strike(self) -> None:
        os.abort()


class ExhaustsMemory(_OnSunnyAnswer):
    """Allocates without end. It stops by itself at 8 GiB (raising MemoryError, an ordinary `error`), so
    a grader that fails to stop it cannot take the machine down, and its tests can tell the two apart."""

    def strike(self) -> None:
        hoard = []
        while len(hoard) < 128:
            hoard.append("x" * (64 << 20))  # written, so resident
        raise MemoryError("the miniature's own 8 GiB cap: the grader did not stop it")


class SlowButCorrect(Defect):
    """Right answers, slowly: spends CPU in proportion to the text it is fed (about 10 µs a character),
    as a parser that rescans its whole buffer would. Never a hang: its verdicts must not depend on how
    busy the machine is."""

    def transform(self, deltas: list[Delta], state: dict[str, Any]) -> list[Delta]:
        return deltas

    def machine(self, family: Family, context: RequestContext) -> Machine:
        return _Slow(grammar(family.name), family.reasoning, context)


class _Slow(Machine):
    def feed(self, text: str) -> list[Delta]:
        spin = time.process_time() + 10e-6 * len(text)
        while time.process_time() < spin:
            pass
        return super().feed(text)


DEFECTS: dict[str, Defect] = {
    "drops_trailing_text": DropsTrailingText(),
    "drops_whitespace_deltas": DropsWhitespaceDeltas(),
    "leaks_split_marker": LeaksSplitMarker(),
    "loses_calls_without_section_end": LosesCallsWithoutSectionEnd(),
    "rewrites_native_ids": RewritesNativeIds(),
    "swallows_call_in_reasoning": SwallowsCallInReasoning(),
    "duplicates_text": DuplicatesText(),
    "crashes_on_dotted_names": Crashes(),
    "arguments_not_json": ArgumentsNotJson(),
    "hangs": Hangs(),
    "hangs_in_native_code": HangsInNativeCode(),
    "aborts": Aborts(),
    "exhausts_memory": ExhaustsMemory(),
    "slow_but_correct": SlowButCorrect(),
}
KILLERS = ("hangs", "hangs_in_native_code", "aborts", "exhausts_memory")  # need a worker stopped or replaced


class _Session:
    def __init__(self, machine: Machine, defect: Defect) -> None:
        self.machine, self.defect, self.state = machine, defect, {}

    def feed(self, chunk: Chunk) -> list[Delta]:
        return self.defect.transform(self.machine.feed(chunk.text), self.state)

    def finish(self, stop: str) -> list[Delta]:
        return self.defect.transform(self.machine.finish(stop), self.state)


@dataclass(frozen=True)
class Miniature:
    family: Family
    defect: Defect

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.defect.machine(self.family, context), self.defect)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        defect = self.defect if self.defect.in_batch else Defect()
        session = _Session(defect.machine(self.family, context), defect)
        return assemble([*session.feed(Chunk(text)), *session.finish(stop)])


from .v2 import V2  # noqa: E402 - catalog v2's defects, built on the classes above

DEFECTS.update(V2)
from .v3 import V3  # noqa: E402 - catalog v3's defects: state that outlives a request

DEFECTS.update(V3)
