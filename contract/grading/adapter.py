"""The protocol every parser under test implements, and how engines are found.

An engine module (`parsers/reference`, `parsers/vllm`, a test's miniatures, …) exposes
`ENGINE: str`, `MAPPING: dict[parser name, family name | None]` (importable without the engine),
optionally `SURFACES` (the APIs its server answers on; Chat Completions alone by default)
and `load() -> Engine`, which imports the engine itself and may raise ImportError (then every cell
of the engine is `skip`). A parser mapped to `None` has no family fixture yet: `unimplemented`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol

from ..cases.family import Family, Sample
from ..cases.model import Chunk, Delta, Message, RequestContext
from .engines import ENGINES
from .pipeline import Coverage


class StreamSession(Protocol):
    """One streamed response: deltas out for every chunk in, then a flush at the end.

    A session that sends its whole request only at the finish (an engine graded over HTTP, whose deltas come back
    all at once) says so with a class attribute `replays_at_finish = True`: the concurrent mode then finishes it
    together with its partner, from two threads, so that both requests are in flight in the server at once.
    """

    def feed(self, chunk: Chunk) -> Sequence[Delta]: ...

    def finish(self, stop: str) -> Sequence[Delta]:
        """`stop` is how generation ended ("stop" or "length"); returns the final deltas."""
        ...


class ParserUnderTest(Protocol):
    """A parser as its server runs it. Where the engine constrains what the model writes under a forced
    `tool_choice`, the parser also has `forced_text(sample) -> Written` (the shape of that text; without it the
    family's own markup is graded); an error there (the server refusing the request) is the cell's error."""

    def parse(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext, stop: str) -> Message: ...

    def open_stream(self, context: RequestContext) -> StreamSession: ...


ParserFactory = Callable[[Family], ParserUnderTest]


@dataclass(frozen=True)
class Engine:
    name: str
    version: str | None
    factories: Mapping[str, ParserFactory] = field(default_factory=dict)  # parser name -> factory
    coverage: tuple[Coverage, ...] = ()  # every parser name the engine registers, and its families
    # parsers that by design leave the think block, markers included, in content ("append-think")
    reasoning_in_content: frozenset[str] = frozenset()
    distribution: str | None = None  # the installed package graded, for the results' build record
    # why deltas cannot be attributed to the chunk that caused them (e.g. graded over HTTP): holdback is then None
    holdback_unmeasurable: str | None = None


@dataclass(frozen=True)
class EngineModule:
    """An engine as the matrix sees it before (and whether or not) it can be imported."""

    name: str
    mapping: Mapping[str, str | None]
    module: ModuleType

    @property
    def surfaces(self) -> tuple[str, ...]:
        """The APIs the engine's server answers on, as its module's `SURFACES` says: "chat" (Chat Completions,
        the default) and "responses" (the Responses API, graded through `contract.grading.responses`)."""
        return tuple(getattr(self.module, "SURFACES", ("chat",)))

    @property
    def without_tool_parser(self) -> frozenset[str]:
        """Parsers under test that pair no tool parser with their reasoning parser (their pipeline's tool is None)."""
        pipelines = getattr(self.module, "PIPELINES", {})
        return frozenset(name for name, pipeline in pipelines.items() if getattr(pipeline, "tool", "") is None)

    def load(self) -> Engine | str:
        """The engine, or why it is skipped."""
        try:
            return self.module.load()
        except ImportError as exc:
            return f"{self.name} is not installed here ({exc})"


@dataclass(frozen=True)
class EngineRepro:
    """What an adapter contributes to a repro: its imports, its serving code and the two entry points.

    `code` defines `run_batch() -> Message` and `run_stream(chunks) -> list[Delta] per chunk + final`
    (see `contract.cli.repro.MAIN`); `sources` are this project's own serving modules, inlined without their
    imports of this project; `files` are written beside the repro (e.g. the tokenizer as JSON);
    `chunk_ids` turns a chunking into the ids the engine receives per chunk (None: the chunk's own).
    For the `concurrent` mode, `run_stream` takes the request as keyword arguments (the cell's by default):
    `request_args(sample)` gives them for another request to the same parser (the partner), and `shared` names
    the function that builds the server (its state), which a concurrent repro calls once for both requests.
    """

    requirement: str
    imports: tuple[str, ...]
    sources: tuple[ModuleType, ...]
    code: str
    files: dict[str, str] = field(default_factory=dict)
    chunk_ids: Callable[[Sequence[Chunk]], tuple[list[list[int]], list[int]]] | None = None
    request_args: Callable[[Sample], dict[str, Any]] | None = None
    shared: str = ""  # "": the code keeps one server already
    replays_at_finish: bool = False  # the stream reaches the server whole at its finish (an engine over HTTP)


BUILTIN_ENGINES = {name: entry.module for name, entry in ENGINES.items()}  # name -> adapter module


def engine_module(spec: str) -> EngineModule:
    """`reference`, or a dotted module path exposing ENGINE, MAPPING and load()."""
    path = BUILTIN_ENGINES.get(spec, spec)
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise ValueError(f"--engine {spec!r}: cannot import adapter module {path!r}: {exc}") from exc
    for attribute in ("ENGINE", "MAPPING", "load"):
        if not hasattr(module, attribute):
            raise ValueError(f"--engine {spec!r}: adapter module {path!r} lacks {attribute}")
    return EngineModule(module.ENGINE, dict(module.MAPPING), module)
