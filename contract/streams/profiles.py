"""Hypothesis profiles for the generated modes (`random`, `chars`).

`ci` (the default) generates 25 chunkings per cell, seeded from the cell's input (family, case, mode:
see `grading.stable_seed`), and reports the first failing one as found:
shrinking a failing engine cell costs seconds (hundreds of reruns), and CI grades hundreds of
known-broken cells. `thorough` generates 300 and shrinks each failure to a minimal chunking; use
it to study one cell (add `--hypothesis-profile thorough` to the rerun command the matrix shows).
"""

from __future__ import annotations

from hypothesis import Phase, settings
from hypothesis.internal.conjecture import providers

CI = "ci"
THOROUGH = "thorough"
EXAMPLES = {CI: 25, THOROUGH: 300}

settings.register_profile(CI, max_examples=EXAMPLES[CI], derandomize=True, print_blob=False,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
settings.register_profile(THOROUGH, max_examples=EXAMPLES[THOROUGH], derandomize=False, print_blob=True)


# Hypothesis (6.131 on) sometimes draws a number or string from the constants of "local" code: every imported
# module outside site-packages and the stdlib. For the matrix that is this project's own source and an engine
# installed editable from a checkout, so a new literal in contract/ or grading a candidate build would change
# which chunkings random and chars cells try, and with them verdicts. Generated chunkings must depend on the
# input alone (see grading.stable_seed): no local constants. hypothesis is pinned exactly in pyproject.toml;
# tests/test_stability.py fails if this hook stops working on another version.
_NO_CONSTANTS = providers.Constants()


def _no_local_constants() -> providers.Constants:
    return _NO_CONSTANTS


providers._get_local_constants = _no_local_constants


def profile(name: str) -> settings:
    if name not in EXAMPLES:
        raise ValueError(f"unknown hypothesis profile {name!r}; known: {', '.join(EXAMPLES)}")
    return settings.get_profile(name)
