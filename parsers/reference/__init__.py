"""This project's own parsers: one reasoning + tool pipeline per family, all on one machine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import parsers
from fixtures import all_families
from parsers import Chunk, Delta, Engine, Family, Message, ParserFactory, RequestContext

from .families import modules
from .machine import Grammar, Machine
from .responses import ServedOnResponses

ENGINE = "reference"
VERSION = "0.1.0"
SURFACES = ("chat", "responses")  # its own Responses API writes any parser's deltas as items (`.responses`)
# one parser per family: a family with no grammar module yet is graded, and its cells are unimplemented
MAPPING: dict[str, str | None] = {name: name for name in all_families()}


class _Session:
    def __init__(self, machine: Machine) -> None:
        self.machine = machine

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.machine.feed(chunk.text)

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.machine.finish(stop)


@dataclass(frozen=True)
class ReferenceParser:
    family: Family
    grammar: Grammar
    reasoning_in_content: bool = False  # leave the think block in content ("append-think")

    def _machine(self, context: RequestContext) -> Machine:
        return Machine(self.grammar, None if self.reasoning_in_content else self.family.reasoning, context)

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self._machine(context))

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        """One shot is the same machine fed a single delta."""
        machine = self._machine(context)
        return parsers.assemble([*machine.feed(text), *machine.finish(stop)])


def _factory(module: ModuleType) -> ParserFactory:
    if hasattr(module, "GRAMMAR"):
        return lambda family: ServedOnResponses(ReferenceParser(family, module.GRAMMAR))
    return lambda family: ServedOnResponses(module.build(family))


def load() -> Engine:
    return Engine(
        ENGINE,
        VERSION,
        {name: _factory(module) for name, module in modules().items()},
    )
