"""A grade run's settings: what decides its verdicts (engines, selection, vocabulary tier, hypothesis profile,
expectations, limits) and where it writes. Read once from the command line (`conftest.py`), then passed as a
parameter to whatever plans, grades, judges or records the run, so no setting travels as a global.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from ..cases.family import REAL, TIERS
from ..grading.isolation import Limits
from ..streams.profiles import CI
from . import results as results_file
from .plan import parse_shard

MATRIX_NODE = "'tests/test_matrix.py::test_cells[{parser}:{case}]'"  # ids hold no quote: quoted as they are


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    results: Path  # the full results file (`--results`), resolved
    expectations: Path  # the folder of <engine>.toml files the run judges against
    custom_expectations: bool = False  # `--expectations` named another folder than the tier's own
    engines: tuple[str, ...] = ("reference",)
    families: tuple[str, ...] | None = None  # `--family`, `--mode`, `--case`: the selection, None for all
    modes: tuple[str, ...] | None = None
    cases: tuple[str, ...] | None = None
    tier: str = REAL  # the vocabulary tier (`--vocabulary`)
    hypothesis_profile: str = CI
    limits: Limits = Limits()
    shard: str | None = None  # `K/N` with N > 1; a whole run (`1/1` included) is None
    cpu_load: int = 0
    narrowed: bool = False  # the run grades a selection, not the whole matrix of its engines

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"--vocabulary {self.tier!r}: one of {', '.join(TIERS)}")
        if self.shard is not None:
            parse_shard(self.shard)

    @property
    def complete_path(self) -> Path:
        """What a complete run writes: the full results, or its shard's file beside them."""
        return results_file.shard_path(self.results, self.shard) if self.shard else self.results

    def rerun_template(self, engine: str, nox_session: str | None, build: str | None = None) -> str:
        """The shell command, run from the project root, that grades one cell of this engine again with the
        settings that decide its verdict (`{parser}`, `{case}` and `{mode}` left to the cell). A builtin engine
        reruns in its nox session (`nox_session`, e.g. `grade`; with `build`, the candidate build it grades)."""
        options: list[str] = []
        if self.hypothesis_profile != CI:
            options += ["--hypothesis-profile", self.hypothesis_profile]
        if self.tier != REAL:
            options += ["--vocabulary", self.tier]
        if self.custom_expectations:
            options += ["--expectations", _shown(self.expectations)]
        for option, value, default in (("--hang-after", self.limits.hang_after, Limits.hang_after),
                                       ("--memory-limit", self.limits.memory_limit_mb, Limits.memory_limit_mb),
                                       ("--cell-cpu", self.limits.cell_cpu, Limits.cell_cpu)):
            if value != default:
                options += [option, str(value)]
        selection = [MATRIX_NODE, "--mode", "{mode}", *map(shlex.quote, options)]
        if nox_session is not None:
            # builtin engine names need no escaping; a candidate build is named again (nox -R does not reinstall it)
            session = f"\"{nox_session}(engine='{engine}')\""
            return " ".join(["nox", "-R", "-s", session, "--", *([build] if build else []), *selection])
        return " ".join(["python", "-m", "pytest", "--grade", "--engine", shlex.quote(engine), *selection])


ROOT = Path(__file__).resolve().parents[2]


def _shown(path: Path) -> str:
    """A path relative to the project root where it is inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
