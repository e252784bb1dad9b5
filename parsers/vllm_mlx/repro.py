"""vllm-mlx's part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata

from parsers import EngineRepro, Sample, family_tokenizer, responses_request

from . import responses, serving
from .adapter import VllmMlxParser, prompt, request_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sent
PROMPT = {prompt!r}  # the chat template's rendered prompt: the server probes its end for a prefilled <think>


def server() -> Server:
    """The server started with --enable-auto-tool-choice --tool-call-parser {tool} --reasoning-parser {reasoning}."""
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(HERE / {tokenizer_file!r}))
    return Server(tool={tool!r}, reasoning={reasoning!r}, tokenizer=tokenizer)


def run_batch() -> Message:
    """A non-streaming request; the engine's output text is what mlx-lm's detokenizer makes of the ids."""
    the_server = server()
    return the_server.parse(REQUEST, PROMPT, the_server.decoded(TOKEN_IDS), STOP)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST, prompt: str = PROMPT,
               stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """One engine output per chunk (its token ids, detokenized by mlx-lm; in the chars mode its text), then
    the last, empty output with the finish reason."""
    stream = server().open_stream(request, prompt)
    per_chunk = [stream.feed(chunk.text, None if MODE == "chars" else chunk.token_ids) for chunk in chunks]
    return per_chunk, stream.finish(stop)


RESPONSES_REQUEST = {responses_request!r}  # the same conversation asked on the Responses API


def respond_batch() -> dict:
    """The Responses API's non-streaming response (as JSON) to the whole output."""
    the_server = server()
    return respond(the_server, RESPONSES_REQUEST, PROMPT, the_server.decoded(TOKEN_IDS), STOP)


def respond_stream(chunks: Sequence[Chunk], final_ids: list[int]) -> tuple[list[list[dict]], list[dict]]:
    """The Responses API's stream events, one list per chunk (the first also response.created and .in_progress),
    then the last output's."""
    stream = ResponseStream(server(), RESPONSES_REQUEST, PROMPT)
    per_chunk = [stream.feed(chunk.text, None if MODE == "chars" else chunk.token_ids) for chunk in chunks]
    return per_chunk, stream.finish(STOP)
'''


def engine_repro(parser: VllmMlxParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    context = sample.context
    code = CODE.format(request=request_json(context), prompt=prompt(context), tool=parser.pipeline.tool,
                       responses_request=responses_request(context),
                       reasoning=parser.pipeline.reasoning, tokenizer_file=tokenizer_file)
    return EngineRepro(
        requirement=f"vllm-mlx=={importlib.metadata.version('vllm-mlx')} (mlx-cpu on Linux)",
        imports=("from transformers import PreTrainedTokenizerFast",),
        sources=(serving, responses),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        request_args=lambda other: {"request": request_json(other.context), "prompt": prompt(other.context),
                                    "stop": other.stop},
        shared="server",
    )
