"""OpenAI's own Harmony parser (the `openai-harmony` package), graded on the harmony family.

Importable without the package: `load()` imports it and raises ImportError where it is absent or
its vocabulary is missing, which makes every cell `skip`. The o200k_harmony encoding needs
`o200k_base.tiktoken` in `$TIKTOKEN_ENCODINGS_BASE`; build it offline with
`python -m parsers.openai_harmony.vocab DIR` (see vocab.py).
"""

from __future__ import annotations

from parsers import Engine

ENGINE = "openai-harmony"
MAPPING: dict[str, str | None] = {"harmony": "harmony"}  # parser under test -> family


def load() -> Engine:
    from .adapter import load_engine  # imports openai_harmony: ImportError when not installed

    return load_engine(ENGINE, MAPPING)
