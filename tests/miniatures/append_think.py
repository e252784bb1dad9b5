"""An "append-think" parser (MiniMax's variant): the think block, markers included, stays in content.

The same parser appears twice: `declared` is graded as append-think (the engine says so),
`undeclared` is not, so only it fails where the output reasons. Engine module protocol: see
contract/grading/adapter.py.
"""

from __future__ import annotations

from contract.cases.family import Family
from contract.grading.adapter import Engine
from parsers.reference import ReferenceParser
from parsers.reference.families import grammar

ENGINE = "append_think"
FAMILY = "hermes"
MAPPING: dict[str, str | None] = {"declared": FAMILY, "undeclared": FAMILY}


def _keeps_think_block(family: Family) -> ReferenceParser:
    """The reference machine with no reasoning style: `<think>…</think>` is plain content to it."""
    return ReferenceParser(family, grammar(family.name), reasoning_in_content=True)


def load() -> Engine:
    return Engine(ENGINE, "0", {name: _keeps_think_block for name in MAPPING},
                  reasoning_in_content=frozenset({"declared"}))
