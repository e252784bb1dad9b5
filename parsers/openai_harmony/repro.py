"""openai-harmony's part of a standalone repro (`contract.cli.repro`): its serving code and the ids it reads."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence

from parsers import Chunk, EngineRepro, Sample

from . import serving
from .adapter import OpenAIHarmonyParser

CODE = '''
OUTPUT_TOKEN_IDS = {output_ids!r}  # the whole response as o200k_harmony ids


def encoding() -> Any:
    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


def run_batch() -> Message:
    return parse(encoding(), OUTPUT_TOKEN_IDS)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int]) -> tuple[list[list[Delta]], list[Delta]]:
    """The ids of each chunk as they arrive (a chunk's text may hold back ids until they are final)."""
    stream = Stream(encoding())
    return [stream.feed(chunk.token_ids or ()) for chunk in chunks], stream.finish(final_ids)
'''


def engine_repro(parser: OpenAIHarmonyParser, sample: Sample, token_ids: tuple[int, ...],
                 tokenizer_file: str) -> EngineRepro:
    def chunk_ids(chunks: Sequence[Chunk]) -> tuple[list[list[int]], list[int]]:
        ids = parser.stream_ids()
        return [ids.push(c) for c in chunks], ids.finish()

    return EngineRepro(
        requirement=f"openai-harmony=={importlib.metadata.version('openai-harmony')} (and o200k_base.tiktoken, "
                    "found through TIKTOKEN_ENCODINGS_BASE or downloaded)",
        imports=("from openai_harmony import HarmonyEncodingName, load_harmony_encoding",),
        sources=(serving,),
        code=CODE.format(output_ids=parser.ids(sample.text, token_ids)),
        chunk_ids=chunk_ids,
        request_args=lambda other: {},  # a stream is its ids alone: nothing else tells two requests apart
        shared="encoding",
    )
