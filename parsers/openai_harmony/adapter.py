"""The matrix's view of openai-harmony: `serving` fed o200k_harmony ids of the sample's text.

The ids come from `parsers.harmony_tokens`, each released as soon as no later text can change it
(so a stream's ids equal the one-shot encoding); the encoding is the offline o200k_harmony
vocabulary (`TIKTOKEN_ENCODINGS_BASE`, never downloaded).
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from openai_harmony import HarmonyEncodingName, HarmonyError, load_harmony_encoding

from parsers import Chunk, Delta, Engine, Family, HarmonyTokens, Message, RequestContext

from . import serving
from .vocab import FILENAME


@cache
def encoding() -> Any:
    """The o200k_harmony encoding, from the offline vocabulary (never downloaded)."""
    base = os.environ.get("TIKTOKEN_ENCODINGS_BASE", "")
    if not (base and (Path(base) / FILENAME).is_file()):
        raise ImportError(
            f"openai-harmony needs {FILENAME} in $TIKTOKEN_ENCODINGS_BASE (now {base!r}): "
            "build it with `python -m parsers.openai_harmony.vocab DIR` and export TIKTOKEN_ENCODINGS_BASE=DIR"
        )
    try:
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    except HarmonyError as exc:
        raise ImportError(f"openai-harmony cannot load o200k_harmony from {base}: {exc}") from exc


@dataclass(frozen=True)
class OpenAIHarmonyParser:
    family: Family

    def ids(self, text: str, token_ids: tuple[int, ...] | None) -> list[int]:
        tokens = HarmonyTokens(encoding(), self.family)
        return [*tokens.push(Chunk(text, token_ids)), *tokens.finish()]

    def stream_ids(self) -> HarmonyTokens:
        return HarmonyTokens(encoding(), self.family)

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message:
        return serving.parse(encoding(), self.ids(text, token_ids))

    def open_stream(self, context: RequestContext) -> _Session:
        return _Session(self.stream_ids(), serving.Stream(encoding()))


@dataclass(frozen=True)
class _Session:
    tokens: HarmonyTokens
    stream: serving.Stream

    def feed(self, chunk: Chunk) -> Sequence[Delta]:
        return self.stream.feed(self.tokens.push(chunk))

    def finish(self, stop: str) -> Sequence[Delta]:
        return self.stream.finish(self.tokens.finish())


def load_engine(name: str, mapping: Mapping[str, str | None]) -> Engine:
    encoding()  # a missing vocabulary skips the engine here, with the reason, instead of failing every cell
    factories = {parser: OpenAIHarmonyParser for parser, family in mapping.items() if family}
    return Engine(name, importlib.metadata.version("openai-harmony"), factories, distribution="openai-harmony")
