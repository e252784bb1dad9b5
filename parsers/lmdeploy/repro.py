"""lmdeploy's part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from parsers import EngineRepro, Sample, family_tokenizer

from . import serving
from .adapter import LmdeployParser, request_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sent
PROMPT_TOKEN_IDS = {prompt_ids!r}  # the end of the rendered prompt, e.g. a prefilled reasoning opener
OUTPUT_TOKEN_IDS = {output_ids!r}  # the generated ids, as the one-shot response detokenizes them


def server() -> Server:
    """The server started with --tool-call-parser {tool} --reasoning-parser {reasoning}."""
    return Server(tool={tool!r}, reasoning={reasoning!r},
                  tokenizer=hf_tokenizer(Tokenizer.from_file(str(HERE / {file!r}))))


def run_batch() -> Message:
    return server().parse(REQUEST, PROMPT_TOKEN_IDS, OUTPUT_TOKEN_IDS, STOP)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST,
               prompt_token_ids: list[int] = PROMPT_TOKEN_IDS, stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """One engine step per chunk (its new token ids, detokenized by lmdeploy; the char tier's text comes
    without ids), then the engine's last, empty step with the finish reason."""
    stream = server().open_stream(request, prompt_token_ids)
    per_chunk = [stream.feed_text(c.text) if MODE == "chars" else stream.feed(c.token_ids) for c in chunks]
    return per_chunk, stream.finish(stop)
'''


def engine_repro(parser: LmdeployParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    context = sample.context
    code = CODE.format(
        request=request_json(context), prompt_ids=parser.prompt_ids(context),
        output_ids=parser.output_ids(sample.text, token_ids),
        tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning, file=tokenizer_file,
    )
    def request_args(other: Sample) -> dict[str, Any]:
        return {"request": request_json(other.context), "prompt_token_ids": parser.prompt_ids(other.context),
                "stop": other.stop}

    return EngineRepro(
        requirement=f"lmdeploy=={importlib.metadata.version('lmdeploy')}",
        imports=("from tokenizers import Tokenizer",),
        sources=(serving,),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        request_args=request_args,
        shared="server",
    )
