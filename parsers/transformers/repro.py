"""transformers' part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata

from parsers import EngineRepro, Sample, family_tokenizer, responses_request

from . import responses, serving
from .adapter import TransformersParser, request_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sent
PROMPT_TOKEN_IDS = {prompt_ids!r}  # the rendered prompt, ending at the assistant turn (and any prefill)
OUTPUT_TOKEN_IDS = {output_ids!r}  # the generated ids


def server() -> Server:
    """`transformers serve` with a model of type {model_type!r} (its built-in response template)."""
    return Server({model_type!r}, PreTrainedTokenizerFast(tokenizer_file=str(HERE / {tokenizer_file!r})))


def run_batch() -> Message:
    return server().parse(REQUEST, PROMPT_TOKEN_IDS, OUTPUT_TOKEN_IDS, STOP)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST,
               prompt_token_ids: list[int] = PROMPT_TOKEN_IDS, stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """The server's streamer gets each chunk's ids one token at a time; chunks without ids (the character
    tier) go to the response parser's own `feed`."""
    stream = server().open_stream(request, prompt_token_ids)
    per_chunk = [stream.feed_text(c.text) if MODE == "chars" else stream.feed(list(c.token_ids or ()))
                 for c in chunks]
    return per_chunk, stream.finish(stop)


RESPONSES_REQUEST = {responses_request!r}  # the same conversation asked on the Responses API


def respond_batch() -> dict:
    """The Responses API's non-streaming response (as JSON) to the whole output."""
    return respond(server(), RESPONSES_REQUEST, PROMPT_TOKEN_IDS, OUTPUT_TOKEN_IDS)


def respond_stream(chunks: Sequence[Chunk], final_ids: list[int]) -> tuple[list[list[dict]], list[dict]]:
    """The Responses API's stream events, one list per chunk (the first also response.created and .in_progress),
    then the end's."""
    stream = ResponseStream(server(), RESPONSES_REQUEST, PROMPT_TOKEN_IDS)
    per_chunk = [stream.feed_text(c.text) if MODE == "chars" else stream.feed(list(c.token_ids or ()))
                 for c in chunks]
    return per_chunk, stream.finish()
'''


def engine_repro(parser: TransformersParser, sample: Sample, token_ids: tuple[int, ...],
                 tokenizer_file: str) -> EngineRepro:
    context = sample.context
    code = CODE.format(request=request_json(context), prompt_ids=parser.prompt_ids(context),
                       responses_request=responses_request(context),
                       output_ids=list(token_ids), model_type=parser.pipeline.tool, tokenizer_file=tokenizer_file)
    return EngineRepro(
        requirement=f"transformers=={importlib.metadata.version('transformers')}"
        " (on the Responses API also fastapi and uvicorn, of its serving extra)",
        imports=("from transformers import PreTrainedTokenizerFast",),
        sources=(serving, responses),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        request_args=lambda other: {"request": request_json(other.context),
                                    "prompt_token_ids": parser.prompt_ids(other.context), "stop": other.stop},
        shared="server",
    )
