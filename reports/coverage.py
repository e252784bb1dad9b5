"""Which of an engine's registered parser names the matrix grades, and why the others are not graded."""

from __future__ import annotations

from dataclasses import dataclass

from contract.run.record import RunRecord

KIND_LABELS = {"tool": "tool parsers", "reasoning": "reasoning parsers"}


@dataclass(frozen=True)
class KindCoverage:
    """One engine's registered names of one kind, split by whether a family fixture grades them."""

    engine: str
    version: str | None
    kind: str
    graded: tuple[str, ...]  # "name → family/family"
    aliases: tuple[str, ...]  # "name = graded name → family"
    missing: tuple[str, ...]  # names no family fixture grades
    why_missing: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (recorded reason, its names), first seen first

    @property
    def registered(self) -> int:
        return len(self.graded) + len(self.aliases) + len(self.missing)

    def line(self) -> str:
        parts = [f"{self.engine} {self.version or ''}".strip() + f" · {KIND_LABELS.get(self.kind, self.kind)}: "
                 f"{self.registered} registered"]
        parts.append("graded: " + (", ".join(self.graded) or "none"))
        if self.aliases:
            parts.append("aliases: " + ", ".join(self.aliases))
        parts.append(f"not graded ({len(self.missing)}): " + (", ".join(self.missing) or "none"))
        parts += [f"{', '.join(names)}: {reason}" for reason, names in self.why_missing]
        return " · ".join(parts)


@dataclass(frozen=True)
class EngineShare:
    """How many of an engine's registered tool and reasoning names the matrix covers."""

    engine: str
    version: str | None
    covered: int
    registered: int

    def line(self) -> str:
        share = f" ({self.covered / self.registered:.0%})" if self.registered else ""
        return (f"{self.engine} {self.version or ''}".strip()
                + f": {self.covered} of {self.registered} registered names covered{share}")


def engine_shares(run: RunRecord) -> list[EngineShare]:
    """Per engine that reports its registry: covered (graded or an alias of a graded name) of registered."""
    return [EngineShare(engine, info.version, sum(1 for r in info.coverage if r.families), len(info.coverage))
            for engine, info in run.engines.items() if info.coverage]


def engine_coverage(run: RunRecord) -> list[KindCoverage]:
    """Per engine that reports its registry (run.engines[*].coverage), one entry per kind."""
    out = []
    for engine, info in run.engines.items():
        rows = info.coverage
        for kind in sorted({r.kind for r in rows}, key=lambda k: (k not in KIND_LABELS, k)):
            mine = [r for r in rows if r.kind == kind]
            graded = tuple(f"{r.name} → {'/'.join(r.families)}" for r in mine if r.families and not r.alias_of)
            aliases = tuple(f"{r.name} = {r.alias_of} → {'/'.join(r.families)}" for r in mine if r.alias_of)
            missing = tuple(r.name for r in mine if not r.families and not r.alias_of)
            why: dict[str, list[str]] = {}
            for r in mine:
                if not r.families and not r.alias_of and r.reason:
                    why.setdefault(r.reason, []).append(r.name)
            out.append(KindCoverage(engine, info.version, kind, graded, aliases, missing,
                                    tuple((reason, tuple(names)) for reason, names in why.items())))
    return out
