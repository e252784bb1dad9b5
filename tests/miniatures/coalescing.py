"""An engine graded through a transport that delivers every streamed delta at the end (as Dynamo's HTTP
frontend does for the matrix): correct output, but no delta can be attributed to the chunk that caused it.

It declares so (`holdback_unmeasurable`), which must make holdback "not measurable" instead of a figure
that would blame the parser for the transport. Engine module protocol: see contract/grading/adapter.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contract.cases.family import Family
from contract.cases.model import Chunk, Delta, Message, RequestContext
from contract.grading.adapter import Engine, StreamSession
from parsers.reference import ReferenceParser
from parsers.reference.families import grammar

ENGINE = "coalescing"
FAMILY = "hermes"
MAPPING: dict[str, str | None] = {"at_the_end": FAMILY}
WHY = "every delta arrives at the finish"


@dataclass
class _HeldUntilFinish:
    inner: StreamSession
    held: list[Delta] = field(default_factory=list)

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        self.held += self.inner.feed(chunk)
        return []

    def finish(self, stop: str) -> Sequence[Delta]:
        return [*self.held, *self.inner.finish(stop)]


@dataclass(frozen=True)
class _AtTheEnd:
    parser: ReferenceParser

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return self.parser.parse(text, token_ids, context, stop)

    def open_stream(self, context: RequestContext) -> _HeldUntilFinish:
        return _HeldUntilFinish(self.parser.open_stream(context))


def _at_the_end(family: Family) -> _AtTheEnd:
    return _AtTheEnd(ReferenceParser(family, grammar(family.name)))


def load() -> Engine:
    return Engine(ENGINE, "0", {"at_the_end": _at_the_end}, holdback_unmeasurable=WHY)
