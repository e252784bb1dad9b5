"""SGLang's part of a standalone repro (`contract.cli.repro`): its serving code and how the cell drives it."""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any

from parsers import EngineRepro, Sample, family_tokenizer

from . import serving
from .adapter import SglangParser, request_json, template_driven

CODE = '''
REQUEST = {request!r}  # the chat request a client sent
PROMPT = {prompt!r}  # the rendered prompt a response-template parser reads after


def server() -> Server:
    """The server started with --tool-call-parser {tool} --reasoning-parser {reasoning}."""
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(HERE / {tokenizer_file!r}){template})
    return Server(tool={tool!r}, reasoning={reasoning!r}, tokenizer=tokenizer)


def rendered(the_server: Server) -> ChatCompletionRequest:
    return the_server.render(ChatCompletionRequest(**REQUEST), PROMPT)


TEMPLATE_FORCES = {force!r}  # the template prefills the reasoning opener (the prompt ends with it), thinking on


def run_batch() -> Message:
    the_server = server()
    return the_server.parse(rendered(the_server), TEMPLATE_FORCES, TEXT, STOP)


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST, prompt: str = PROMPT,
               template_forces: bool = TEMPLATE_FORCES, stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """One engine step per chunk (its delta text: SGLang's parsers read no ids), then the end of generation."""
    the_server = server()
    stream = the_server.open_stream(the_server.render(ChatCompletionRequest(**request), prompt), template_forces)
    return [stream.feed(chunk.text) for chunk in chunks], stream.finish(stop)
'''


def engine_repro(parser: SglangParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    context = sample.context
    declared = parser.family.response_template if template_driven(parser.pipeline) else None
    # a response-template parser reads the response_template the model's tokenizer_config.json declares
    template = f", response_template={json.loads(json.dumps(declared.template))!r}" if declared is not None else ""
    code = CODE.format(request=request_json(context), tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning,
                       tokenizer_file=tokenizer_file, force=parser.template_forces(context), template=template,
                       prompt=parser.prompt(context))
    def request_args(other: Sample) -> dict[str, Any]:
        return {"request": request_json(other.context), "prompt": parser.prompt(other.context),
                "template_forces": parser.template_forces(other.context), "stop": other.stop}

    return EngineRepro(
        requirement=f"sglang=={importlib.metadata.version('sglang')}",
        imports=("from transformers import PreTrainedTokenizerFast",),
        sources=(serving,),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        request_args=request_args,
        shared="server",
    )
