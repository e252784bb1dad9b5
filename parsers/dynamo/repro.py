"""Dynamo's part of a standalone repro (`contract.cli.repro`): its frontend with the replaying worker, and how
the cell drives it over HTTP."""

from __future__ import annotations

import importlib.metadata

from parsers import EngineRepro, Sample, family_tokenizer

from . import serving
from .adapter import DynamoParser, request_json, responses_json

CODE = '''
REQUEST = {request!r}  # the chat request a client sends (the worker's replay instruction is added per run)
_FRONTEND: list[Frontend] = []


def frontend() -> Frontend:
    """Dynamo's HTTP frontend on 127.0.0.1 with one model registered with ModelRuntimeConfig(tool_call_parser=
    {tool!r}, reasoning_parser={reasoning!r}), in a subprocess running this very file."""
    if not _FRONTEND:
        import atexit
        model = ModelSpec({name!r}, tool={tool!r}, reasoning={reasoning!r}, tokenizer_json=str(HERE / {file!r}))
        _FRONTEND.append(Frontend([model], server_script=str(Path(__file__).resolve())))
        atexit.register(_FRONTEND[0].close)
    return _FRONTEND[0]


def replaying(steps: list[Step], request: dict = REQUEST, stop: str = STOP) -> dict:
    kwargs = {{**request["chat_template_kwargs"], "replay": frontend().replay(steps, stop)}}
    return {{**request, "chat_template_kwargs": kwargs}}


def run_batch() -> Message:
    """A non-streaming completion; the worker emits one token per engine step."""
    return frontend().chat(replaying([Step((i,)) for i in TOKEN_IDS]))


def run_stream(chunks: Iterable[Chunk], final_ids: list[int], request: dict = REQUEST,
               stop: str = STOP) -> tuple[list[list[Delta]], list[Delta]]:
    """A streamed completion (SSE), one engine step per chunk (a chunk without ids, cut inside tokens, as its
    text, which the worker encodes), then an empty step with the finish reason.
    The frontend emits nothing for a step its parsers hold, so the deltas are all taken at the finish."""
    steps = [Step(text=c.text) if MODE == "chars" else Step(tuple(c.token_ids)) for c in chunks]
    deltas = frontend().stream(replaying(steps, request, stop))
    return [[] for _ in steps], deltas


RESPONSES_REQUEST = {responses_request!r}  # the same conversation asked on the Responses API


def respond_batch() -> dict:
    """The Responses API's non-streaming response (as JSON); the worker emits one token per engine step."""
    return frontend().respond(replaying([Step((i,)) for i in TOKEN_IDS], RESPONSES_REQUEST))


def respond_stream(chunks: Sequence[Chunk], final_ids: list[int]) -> tuple[list[list[dict]], list[dict]]:
    """The Responses API's stream events, one engine step per chunk as run_stream's; all taken at the finish."""
    steps = [Step(text=c.text) if MODE == "chars" else Step(tuple(c.token_ids)) for c in chunks]
    return [[] for _ in steps], frontend().response_events(replaying(steps, RESPONSES_REQUEST))
'''


def engine_repro(parser: DynamoParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    code = CODE.format(request=request_json(parser.name, sample.context, ""), name=parser.name,
                       responses_request=responses_json(parser.name, sample.context, ""),
                       tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning, file=tokenizer_file)
    return EngineRepro(
        requirement=f"ai-dynamo-runtime=={importlib.metadata.version('ai-dynamo-runtime')}",
        imports=(),
        sources=(serving,),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        request_args=lambda other: {"request": request_json(parser.name, other.context, ""), "stop": other.stop},
        replays_at_finish=True,
    )
