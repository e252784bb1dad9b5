"""SGLang's part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata

from parsers import EngineRepro, Sample, family_tokenizer

from . import serving
from .adapter import SglangParser, request_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sent


def server() -> Server:
    """The server started with --tool-call-parser {tool} --reasoning-parser {reasoning}."""
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(HERE / {tokenizer_file!r}))
    return Server(tool={tool!r}, reasoning={reasoning!r}, tokenizer=tokenizer)


FORCE_REASONING = {force!r}  # as the server sets it: the prompt ends with the reasoning opener, thinking on


def run_batch() -> Message:
    return server().parse(ChatCompletionRequest(**REQUEST), FORCE_REASONING, TEXT, STOP)


def run_stream(chunks: tuple[Chunk, ...], final_ids: list[int]) -> tuple[list[list[Delta]], list[Delta]]:
    """One engine step per chunk (its delta text: SGLang's parsers read no ids), then the end of generation."""
    stream = server().open_stream(ChatCompletionRequest(**REQUEST), FORCE_REASONING)
    return [stream.feed(chunk.text) for chunk in chunks], stream.finish(STOP)
'''


def engine_repro(parser: SglangParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    context = sample.context
    code = CODE.format(request=request_json(context), tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning,
                       tokenizer_file=tokenizer_file, force=parser.force_reasoning(context))
    return EngineRepro(
        requirement=f"sglang=={importlib.metadata.version('sglang')}",
        imports=("from transformers import PreTrainedTokenizerFast",),
        sources=(serving,),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
    )
