"""What an engine adapter declares: which of its registered parsers form each parser under test.

A parser under test is usually a tool parser and a reasoning parser configured together, the way
the engine's server is started (`--tool-call-parser hermes --reasoning-parser qwen3`). The
coverage of an engine says, for every name it registers, which families it is graded on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KINDS = ("tool", "reasoning")


@dataclass(frozen=True)
class Pipeline:
    """One parser under test: the engine's registry names and the family it is graded on."""

    family: str
    tool: str | None = None
    reasoning: str | None = None
    reasoning_in_content: bool = False  # the reasoning parser keeps the think block in content by design

    def names(self, kind: str) -> tuple[str, ...]:
        name = self.tool if kind == "tool" else self.reasoning
        return (name,) if name else ()


def kept_in_content(pipelines: Mapping[str, Pipeline]) -> frozenset[str]:
    """Parsers under test graded against the append-think form of each sample."""
    return frozenset(name for name, p in pipelines.items() if p.reasoning_in_content)


def mapping(pipelines: Mapping[str, Pipeline]) -> dict[str, str | None]:
    """An engine module's MAPPING (parser under test -> family), read off its pipelines."""
    return {name: pipeline.family for name, pipeline in pipelines.items()}


@dataclass(frozen=True)
class Coverage:
    """One registered name of an engine and the families whose fixtures grade it (none yet: empty)."""

    kind: str
    name: str
    families: tuple[str, ...]
    alias_of: str | None = None  # another registered name bound to the very same implementation
    reason: str | None = None  # why a name with no family is not graded (its engine's coverage record)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "name": self.name, "families": list(self.families), "alias_of": self.alias_of,
                "reason": self.reason}


def coverage(
    registered: Mapping[str, Mapping[str, object]], pipelines: Mapping[str, Pipeline]
) -> tuple[Coverage, ...]:
    """Every registered tool and reasoning name, with the families of the pipelines that use it.

    `registered[kind]` maps each name to its implementation (a class); a name bound to the same
    implementation as a graded name is reported as its alias, covering the same families. A
    pipeline naming a parser the engine does not register is a wiring bug, raised here.
    """
    rows = []
    for kind in KINDS:
        names = registered.get(kind, {})
        for parser, pipeline in pipelines.items():
            missing = [n for n in pipeline.names(kind) if n not in names]
            if missing:
                raise ValueError(f"parser {parser!r}: the engine registers no {kind} parser {missing[0]!r}")
        graded = {n: sorted({p.family for p in pipelines.values() if n in p.names(kind)}) for n in names}
        for name in sorted(names):
            alias_of = None
            if not graded[name]:
                alias_of = next((n for n in sorted(names) if graded[n] and names[n] is names[name]), None)
            families = graded[alias_of] if alias_of else graded[name]
            rows.append(Coverage(kind, name, tuple(families), alias_of))
    return tuple(rows)
