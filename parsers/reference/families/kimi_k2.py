"""Kimi K2: a section of delimited calls whose head `functions.NAME:IDX` is the native id.

Kimi K2 / K2.5 sometimes copy a bare counter (`0`, `call00003`, `call_3`) from the history as the
head: the call then names no function. As SGLang and vLLM do, the name is inferred from the one
declared tool whose parameters accept the argument keys; the call is held until its arguments are
complete, and with no unique fit its own text is shown as content.
"""

from __future__ import annotations

import json
from typing import Any

from fixtures.families import kimi_k2 as f
from parsers import RequestContext, Tool

from ..grammars.delimited import DelimitedSpec, Head, _At
from ..machine import Grammar
from .deepseek_v3_1 import GuardedSection


def kimi_head(head: str) -> Head:
    """`functions.NAME:IDX` (or `NAME:IDX`): the name, and the whole head as the native id; a head
    that is only a counter or a client-style id names nothing (name "")."""
    if not head.startswith("functions.") and ":" not in head:
        return "", head
    name = head.removeprefix("functions.")
    name = name.rsplit(":", 1)[0] if ":" in name else name
    return name, head


def fits(tool: Tool, arguments: dict[str, Any]) -> bool:
    """The tool's parameters accept these keys: each one declared, every required one present."""
    properties = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", ())
    return set(arguments) <= set(properties) and set(required) <= set(arguments)


def infer_name(arguments: str, tools: tuple[Tool, ...]) -> str | None:
    """The one declared tool whose parameters fit the arguments, or None."""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    fitting = [t.name for t in tools if fits(t, parsed)]
    return fitting[0] if len(fitting) == 1 else None


class KimiSection(GuardedSection):
    """A Kimi section whose nameless calls are named once their arguments are complete."""

    def __init__(self, context: RequestContext) -> None:
        super().__init__(SPEC)
        self.tools = context.tools
        self.nameless: dict[int, str] = {}  # call index -> the counter head it was written with

    def _start_call(self) -> None:
        super()._start_call()
        call = self.calls[-1]
        if not call.name:  # held (the emitter announces no nameless call) until named
            self.nameless[len(self.calls) - 1] = call.id or ""
            call.name, call.id = None, None

    def feed(self, text: str) -> str | None:
        rest = super().feed(text)
        self._name_complete(final=rest is not None)
        return rest

    def finish(self) -> None:
        super().finish()
        self._name_complete(final=True)

    def _name_complete(self, final: bool) -> None:
        for index in sorted(self.nameless):
            if not final and index == len(self.calls) - 1 and self.at is _At.ARGUMENTS:
                return  # still streaming its arguments
            counter = self.nameless.pop(index)
            call = self.calls[index]
            name = infer_name(call.arguments, self.tools)
            if name is not None:
                # a bare counter becomes the native id it stands for; a client-style id stays as written
                call.name, call.id = name, f"functions.{name}:{counter}" if counter.isdigit() else counter
                continue
            # no unique fit: the call's own text is content, the calls after it move up
            self.stray += f"{SPEC.call_begin}{counter}{SPEC.separator}{call.arguments}{SPEC.call_end}"
            del self.calls[index]
            self.nameless = {i - 1 if i > index else i: c for i, c in self.nameless.items()}
            self._name_complete(final)
            return


SPEC = DelimitedSpec(
    ends=(f.SECTION_END, f.SECTION_END_SINGULAR),
    call_begin=f.CALL_BEGIN,
    separator=f.ARGUMENT_BEGIN,
    call_end=f.CALL_END,
    head=kimi_head,
)
GRAMMAR = Grammar(
    starts=(f.SECTION_BEGIN, f.SECTION_BEGIN_SINGULAR),
    open=lambda marker, context: KimiSection(context),
    strays=(f.SECTION_END, f.SECTION_END_SINGULAR, f.ARGUMENT_BEGIN, f.CALL_END),
)
