"""Dynamo's part of a standalone repro (`contract.repro`): its frontend with the replaying worker, and how
the cell drives it over HTTP."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence

from contract.family import Sample
from contract.model import Chunk
from contract.repro import EngineRepro
from contract.tokenizer import family_tokenizer

from . import serving
from .adapter import DynamoParser, _steps, request_json

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


def replaying(steps: list[Step]) -> dict:
    kwargs = {{**REQUEST["chat_template_kwargs"], "replay": replay_key(steps, STOP)}}
    return {{**REQUEST, "chat_template_kwargs": kwargs}}


def run_batch() -> Message:
    """A non-streaming completion; the worker emits one token per engine step."""
    return frontend().chat(replaying([Step((i,)) for i in TOKEN_IDS]))


def run_stream(chunks: tuple[Chunk, ...], final_ids: list[int]) -> tuple[list[list[Delta]], list[Delta]]:
    """A streamed completion (SSE), one engine step per chunk, then an empty step with the finish reason.
    The frontend emits nothing for a step its parsers hold, so the deltas are all taken at the finish."""
    deltas = frontend().stream(replaying([Step(tuple(c.token_ids)) for c in chunks]))
    return [[] for _ in chunks], deltas
'''


def engine_repro(parser: DynamoParser, sample: Sample, token_ids: tuple[int, ...], tokenizer_file: str) -> EngineRepro:
    def chunk_ids(chunks: Sequence[Chunk]) -> tuple[list[list[int]], list[int]]:
        return [list(step.ids) for step in _steps(parser.family, chunks)], []

    code = CODE.format(request=request_json(parser.name, sample.context, ""), name=parser.name,
                       tool=parser.pipeline.tool, reasoning=parser.pipeline.reasoning, file=tokenizer_file)
    return EngineRepro(
        requirement=f"ai-dynamo-runtime=={importlib.metadata.version('ai-dynamo-runtime')}",
        imports=(),
        sources=(serving,),
        code=code,
        files={tokenizer_file: family_tokenizer(parser.family).to_str()},
        chunk_ids=chunk_ids,
    )
