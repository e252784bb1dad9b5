"""Hypothesis profiles for the generated modes (`random`, `chars`)."""

from __future__ import annotations

from hypothesis import settings

CI = "ci"
THOROUGH = "thorough"
EXAMPLES = {CI: 25, THOROUGH: 300}

settings.register_profile(CI, max_examples=EXAMPLES[CI], derandomize=True, print_blob=False)
settings.register_profile(THOROUGH, max_examples=EXAMPLES[THOROUGH], derandomize=False, print_blob=True)


def profile(name: str) -> settings:
    if name not in EXAMPLES:
        raise ValueError(f"unknown hypothesis profile {name!r}; known: {', '.join(EXAMPLES)}")
    return settings.get_profile(name)
