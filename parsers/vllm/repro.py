"""vLLM's part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Sequence
from typing import Any

from parsers import Chunk, EngineRepro, Sample, family_tokenizer, responses_request

from . import responses, serving
from .adapter import VllmHarmonyParser, VllmParser, VllmTemplateParser, request_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sent
PROMPT_TOKEN_IDS = {prompt_ids!r}  # the end of the rendered prompt, e.g. a prefilled reasoning opener
OUTPUT_TOKEN_IDS = {output_ids!r}  # the generated ids, as the one-shot response hands them to the parser


def server() -> Server:
    """The server started with --tool-call-parser {tool} --reasoning-parser {reasoning}{harmony_note}."""
    return Server(tool={tool!r}, reasoning={reasoning!r}, tokenizer={tokenizer}, harmony={harmony!r}, model={model})


def run_batch() -> Message:
    the_server = server()
    prepared = the_server.prepare(ChatCompletionRequest(**REQUEST), PROMPT_TOKEN_IDS)
    return the_server.parse(prepared, TEXT, OUTPUT_TOKEN_IDS, STOP)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST,
               prompt_token_ids: list[int] = PROMPT_TOKEN_IDS, stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """One engine output per chunk (delta text and delta token ids), then the last, empty one with the
    finish reason."""
    the_server = server()
    stream = the_server.open_stream(the_server.prepare(ChatCompletionRequest(**request), prompt_token_ids))
    per_chunk = [stream.feed(c.text, c.token_ids or (), text_without_ids=MODE == "chars") for c in chunks]
    return per_chunk, stream.finish(stop, final_ids)


RESPONSES_REQUEST = {responses_request!r}  # the same conversation asked on the Responses API


def respond_batch() -> dict:
    """The Responses API's non-streaming response (as JSON) to the whole output."""
    the_server = server()
    prepared = the_server.prepare(ResponsesRequest(**RESPONSES_REQUEST), PROMPT_TOKEN_IDS)
    if the_server.harmony:
        return harmony_respond(the_server, prepared, OUTPUT_TOKEN_IDS, STOP)
    return respond(the_server, prepared, TEXT, OUTPUT_TOKEN_IDS, STOP)


def respond_stream(chunks: Sequence[Chunk], final_ids: list[int]) -> tuple[list[list[dict]], list[dict]]:
    """The Responses API's stream events: response.created and .in_progress before the first engine output, one
    list per engine output, then the finish's."""
    the_server = server()
    prepared = the_server.prepare(ResponsesRequest(**RESPONSES_REQUEST), PROMPT_TOKEN_IDS)
    stream = (HarmonyResponseStream if the_server.harmony else ResponseStream)(the_server, prepared)
    opening = stream.start()
    per_chunk = [(opening if n == 0 else []) + stream.step(c.text, list(c.token_ids or ()), None)
                 for n, c in enumerate(chunks)]
    return per_chunk, ([] if chunks else opening) + stream.step("", final_ids, STOP)
'''
FAMILY_TOKENIZER = "get_cached_tokenizer(PreTrainedTokenizerFast(tokenizer_file=str(HERE / {file!r}){template}))"
# a template-driven parser (hf, beam) reads the response_template the model's tokenizer_config.json declares
TEMPLATE_KEYWORD = ", response_template={template!r}"
HARMONY_TOKENIZER = "HarmonyTokenizer(get_encoding())"


def engine_repro(parser: VllmParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    context = sample.context
    harmony = isinstance(parser, VllmHarmonyParser)
    declared = parser.family.response_template if isinstance(parser, VllmTemplateParser) else None
    template = TEMPLATE_KEYWORD.format(template=json.loads(json.dumps(declared.template))) if declared is not None else ""

    def chunk_ids(chunks: Sequence[Chunk]) -> tuple[list[list[int]], list[int]]:
        ids = parser.stream_ids()  # as the adapter's stream session: the ids each engine output carries
        return [ids.push(c) for c in chunks], ids.finish()

    code = CODE.format(
        request=request_json(context), prompt_ids=parser.prompt_ids(context),
        responses_request=responses_request(context, model=None),
        output_ids=parser.output_ids(sample.text, token_ids),
        tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning, harmony=harmony,
        harmony_note=" (model type gpt_oss: vLLM's Harmony parser)" if harmony else "",
        model=f"ServedModel({parser.server.model.architecture!r})" if parser.server.model is not None else None,
        tokenizer=HARMONY_TOKENIZER if harmony else FAMILY_TOKENIZER.format(file=tokenizer_file, template=template),
    )
    imports = ["from vllm.entrypoints.openai.parser.harmony_utils import get_encoding"] if harmony else [
        "from transformers import PreTrainedTokenizerFast", "from vllm.tokenizers.hf import get_cached_tokenizer"]
    def request_args(other: Sample) -> dict[str, Any]:
        return {"request": request_json(other.context), "prompt_token_ids": parser.prompt_ids(other.context),
                "stop": other.stop}

    return EngineRepro(
        requirement=f"vllm=={importlib.metadata.version('vllm')}"
        + (" (and o200k_base.tiktoken, found through TIKTOKEN_ENCODINGS_BASE or downloaded)" if harmony else ""),
        imports=tuple(imports),
        sources=(serving, responses),
        code=code,
        files={} if harmony else {tokenizer_file: family_tokenizer(parser.family).to_str()},
        chunk_ids=chunk_ids,
        request_args=request_args,
        shared="server",
    )
