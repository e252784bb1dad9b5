"""NVIDIA Dynamo's OpenAI frontend with a replaying worker, and a client that talks to it over HTTP.

Dynamo has no Python parse API: its tool-call and reasoning parsers run inside the Rust frontend
(preprocessor, detokenizer, jail, aggregator). So this module starts what a deployment runs, in one
subprocess bound to 127.0.0.1: an in-memory runtime (`DistributedRuntime(loop, "mem", "tcp")`), the HTTP
frontend (`make_engine` + `run_input(..., "http", ...)`), and one model per parser configuration
(`ModelRuntimeConfig.tool_call_parser` / `.reasoning_parser`, `register_model(ModelInput.Tokens,
ModelType.Chat, ...)`) whose directory holds the family tokenizer and a trivial chat template. A model
is registered when the client first asks for it (`Frontend.serve`; a line on the server's stdin), as a
worker joining a running deployment registers: the frontend discovers it, as it does in production.

The worker replays what the request asks it to: the chat template renders the chat_template_kwargs
`replay` (the sha256 of a payload the client stored under the server's root: the output chunks and the
finish reason; a key, so the frontend need not tokenize a long replay in every prompt) and `prompt_tail` (a
prefilled opener); the worker decodes its prompt ids, reads the payload named, and yields each chunk's token
ids as one engine step (a chunk given as text: its text encoded with the model's tokenizer; the frontend
detokenizes them itself, with the request's skip_special_tokens), then an empty step carrying the finish
reason. A payload is named by its own hash and never changes, so every response depends on its request alone.
Models are registered with the structural-tag policy Dynamo's workers publish by default. A probe payload
generates nothing and has the worker write down the guided decoding the frontend sent it (`guided_decoding`):
under a forced tool_choice that constraint says what the model would write.

Framework-free on purpose: the engine and the project's message types only, so a standalone
reproduction can carry this very code. `python serving.py --dynamo-serve SPEC.json` runs the server side.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parsers import Chunk, Delta, Message, ToolCall, ToolCallDelta

HOST = "127.0.0.1"
EOS_ID = 999_999  # Dynamo requires an eos id; one no replay ever emits
CHAT_TEMPLATE = "{{ replay }}\n{{ prompt_tail }}"
REPLAYS = "replays"  # under the server's root: each replay payload, named by its sha256
CONSTRAINTS = "constraints"  # under the server's root: what a probe's worker received as its guided decoding
# what a worker started with no `--dyn-structural-tag` publishes (ai-dynamo 1.6.1 `StructuralTagConfig()`, which
# dynamo/vllm/main.py hands `ModelRuntimeConfig.set_structural_tag`): structural tags on, for every request
WORKER_STRUCTURAL_TAG = {"scope": "always", "schema": "auto", "allow_tool_calls_with_structured_output": False,
                         "exclude_special_tokens": None, "reasoning_boundary": "auto", "tool_arguments_any_order": False}
PROBE = json.dumps({"steps": [], "finish": "stop", "probe": True}, separators=(",", ":")).encode()  # generates nothing
STARTUP_S = 600.0  # waiting for the subprocess to serve every model (start-up only, never a verdict)
SERVE_FLAG = "--dynamo-serve"  # argv of the server process: this file (or a repro inlining it), the flag, the spec


@dataclass(frozen=True)
class ModelSpec:
    """One served model: a `--dyn-tool-call-parser` / `--dyn-reasoning-parser` configuration."""

    name: str
    tool: str | None
    reasoning: str | None
    tokenizer_json: str  # path of the family tokenizer (tokenizer.json)


@dataclass(frozen=True)
class Step:
    """One engine step of the replay: the token ids the engine emits in it, or, for a chunk cut inside tokens
    (as a re-chunking proxy cuts), its text, which the worker encodes anew with the model's own tokenizer (so
    a marker cut in two arrives as ordinary tokens and the frontend decodes exactly the chunk's text)."""

    ids: tuple[int, ...] = ()
    text: str | None = None

    @classmethod
    def of(cls, chunk: Chunk) -> Step:
        return cls(tuple(chunk.token_ids)) if chunk.token_ids is not None else cls(text=chunk.text)

    def to_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids)} if self.text is None else {"text": self.text}


def replay_payload(steps: Sequence[Step], finish: str) -> bytes:
    """What the worker is to generate: every step, then the finish reason."""
    return json.dumps({"steps": [s.to_json() for s in steps], "finish": finish}, separators=(",", ":")).encode()


def write_model_dir(directory: Path, spec: ModelSpec) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.tokenizer_json, directory / "tokenizer.json")
    (directory / "tokenizer_config.json").write_text(json.dumps(
        {"chat_template": CHAT_TEMPLATE, "bos_token": None, "eos_token": None}))
    (directory / "generation_config.json").write_text(json.dumps({"eos_token_id": EOS_ID}))
    (directory / "config.json").write_text(json.dumps(
        {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "max_position_embeddings": 131072,
         "eos_token_id": EOS_ID}))


# ---------------------------------------------------------------- server side (the subprocess)


async def _serve(port: int, root: Path) -> None:
    import asyncio

    from dynamo.llm import (
        EngineType,
        EntrypointArgs,
        ModelInput,
        ModelRuntimeConfig,
        ModelType,
        WorkerType,
        make_engine,
        register_model,
        run_input,
    )
    from dynamo.runtime import DistributedRuntime
    from tokenizers import Tokenizer

    loop = asyncio.get_running_loop()
    runtime = DistributedRuntime(loop, "mem", "tcp")
    files: dict[str, str] = {}  # model name -> its tokenizer file
    tokenizers: dict[str, Tokenizer] = {}  # by file, loaded when a request first needs it

    async def generate(request: dict[str, Any], context: Any = None) -> Any:
        path = files[request["model"]]
        if path not in tokenizers:
            tokenizers[path] = Tokenizer.from_file(path)
        tokenizer = tokenizers[path]
        prompt = tokenizer.decode(request["token_ids"], skip_special_tokens=False)
        key = prompt.split(chr(10), 1)[0].strip()
        replay = json.loads((root / REPLAYS / f"{key}.json").read_bytes())
        if replay.get("probe"):
            guided = (request.get("sampling_options") or {}).get("guided_decoding")
            (root / CONSTRAINTS / f"{key}.json").write_text(json.dumps(guided))
        for step in replay["steps"]:
            ids = step["ids"] if "ids" in step else tokenizer.encode(step["text"], add_special_tokens=False).ids
            yield {"token_ids": ids}
        yield {"token_ids": [], "finish_reason": replay["finish"]}

    serving: list[asyncio.Future[Any]] = []

    async def register(spec: ModelSpec) -> None:
        files[spec.name] = spec.tokenizer_json
        endpoint = runtime.endpoint(f"graded.{spec.name}.generate")
        config = ModelRuntimeConfig()
        config.tool_call_parser = spec.tool
        config.reasoning_parser = spec.reasoning
        config.set_structural_tag(WORKER_STRUCTURAL_TAG)
        directory = root / "models" / spec.name
        write_model_dir(directory, spec)
        await register_model(ModelInput.Tokens, ModelType.Chat, endpoint, str(directory), spec.name,
                             worker_type=WorkerType.Aggregated, runtime_config=config)
        serving.append(asyncio.ensure_future(endpoint.serve_endpoint(generate)))

    def read_models() -> None:
        """Each stdin line is a model to register; the parent holds stdin open, and when it goes (even
        killed), so do we, and our temp dir."""
        for line in sys.stdin:
            asyncio.run_coroutine_threadsafe(register(ModelSpec(**json.loads(line))), loop).add_done_callback(
                _exit_on_failure)
        shutil.rmtree(root, ignore_errors=True)
        os._exit(0)

    engine = await make_engine(runtime, EntrypointArgs(EngineType.Dynamic, http_host=HOST, http_port=port))
    threading.Thread(target=read_models, daemon=True).start()
    await run_input(runtime, "http", engine)


def _exit_on_failure(registered: Any) -> None:
    """A model that fails to register ends the server, so the client reports the log instead of waiting."""
    if registered.exception() is not None:
        import traceback

        traceback.print_exception(registered.exception())
        sys.stderr.flush()
        os._exit(1)


def server_main(spec_path: str) -> None:
    import asyncio

    spec = json.loads(Path(spec_path).read_text())
    try:  # the event loop Dynamo's own workers run on (the runtime pins it); asyncio's where it is absent
        import uvloop
    except ImportError:
        asyncio.run(_serve(spec["port"], Path(spec["root"])))
    else:
        uvloop.run(_serve(spec["port"], Path(spec["root"])))


# ---------------------------------------------------------------- client side


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def server_env(root: Path) -> dict[str, str]:
    """Loopback only; model cards and caches inside the run's own temp dir, never the user's home."""
    return {
        **os.environ,
        "HOME": str(root), "XDG_CACHE_HOME": str(root / ".cache"), "HF_HOME": str(root / ".cache" / "hf"),
        "HF_HUB_OFFLINE": "1", "DYN_TCP_RPC_HOST": HOST, "DYN_TCP_RESPONSE_STREAM_HOST": HOST,
        "DYN_SELF_HOST_METADATA": "0", "DYN_LOG": os.environ.get("DYN_LOG", "error"),
        # one runtime thread: the grader runs a frontend per parser worker, a core each; more threads only add
        # wake-ups between them (a quarter of the frontend's CPU time per request, measured)
        "DYN_RUNTIME_NUM_WORKER_THREADS": os.environ.get("DYN_RUNTIME_NUM_WORKER_THREADS", "1"),
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent.parent),
                                       os.environ.get("PYTHONPATH", "")]),
    }


class EngineError(RuntimeError):
    """The frontend refused or failed a request (what a client would see), or the server died."""


class Frontend:
    """The subprocess serving the models asked for, and requests to it. Start once, `close()` at exit."""

    def __init__(self, models: Sequence[ModelSpec] = (), server_script: str | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="dynamo-graded-"))
        self.port = _free_port()
        self.models: dict[str, ModelSpec] = {}
        self._replays: set[str] = set()  # the keys of the replays written
        (self.root / REPLAYS).mkdir()
        (self.root / CONSTRAINTS).mkdir()
        spec = self.root / "spec.json"
        spec.write_text(json.dumps({"port": self.port, "root": str(self.root)}))
        self.log = (self.root / "server.log").open("w+b")
        self.process = subprocess.Popen(
            [sys.executable, server_script or __file__, SERVE_FLAG, str(spec)], stdin=subprocess.PIPE,
            stdout=self.log, stderr=subprocess.STDOUT, env=server_env(self.root), cwd=self.root)
        self.serve(*models)

    def serve(self, *models: ModelSpec) -> None:
        """Register the models not served yet and wait until the frontend lists them."""
        new = [m for m in models if m.name not in self.models]
        assert self.process.stdin is not None
        try:
            for model in new:
                self.process.stdin.write((json.dumps(model.__dict__) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            self.process.wait()
            self._check_alive()
        self._wait_listed({m.name for m in new})
        self.models.update((m.name, m) for m in new)

    def _log_tail(self) -> str:
        self.log.flush()
        return (self.root / "server.log").read_bytes()[-3000:].decode(errors="replace")

    def _check_alive(self) -> None:
        if self.process.poll() is not None:
            raise EngineError(f"the Dynamo frontend exited ({self.process.returncode}):\n{self._log_tail()}")

    def _wait_listed(self, wanted: set[str]) -> None:
        """Until the frontend is up and lists every model named (it discovers a registration within moments)."""
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                status, body = self._request("GET", "/v1/models", None)
                if status == 200 and wanted <= {m["id"] for m in json.loads(body)["data"]}:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        tail = self._log_tail()
        self.close()
        raise EngineError(f"the Dynamo frontend did not serve {sorted(wanted)} in {STARTUP_S:.0f} s:\n{tail}")

    def replay(self, steps: Sequence[Step], finish: str) -> str:
        """The key the request names its replay by (the chat template puts it in the prompt, where the worker
        reads it): the payload is stored under its own hash, so the key alone decides what is generated."""
        payload = replay_payload(steps, finish)
        key = hashlib.sha256(payload).hexdigest()
        if key not in self._replays:  # written whole before any request names it
            (self.root / REPLAYS / f"{key}.json").write_bytes(payload)
            self._replays.add(key)
        return key

    def guided_decoding(self, request: Callable[[str], dict[str, Any]]) -> Any:
        """The constraint (`sampling_options.guided_decoding`) the frontend sends its worker for the request
        `request(key)` builds around a replay key: asked with a probe that generates nothing, whose worker writes
        down what it received (one probe at a time per server)."""
        key = hashlib.sha256(PROBE).hexdigest()
        if key not in self._replays:
            (self.root / REPLAYS / f"{key}.json").write_bytes(PROBE)
            self._replays.add(key)
        answer = self.root / CONSTRAINTS / f"{key}.json"
        answer.unlink(missing_ok=True)
        self.chat(request(key))
        return json.loads(answer.read_text())

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(HOST, self.port, timeout=None)

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
        connection = self._connection()
        try:
            connection.request(method, path, json.dumps(body) if body is not None else None,
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def _post(self, path: str, request: dict[str, Any]) -> Any:
        """A non-streaming request's JSON answer."""
        self._check_alive()
        try:
            status, body = self._request("POST", path, {**request, "stream": False})
        except OSError as exc:
            self._check_alive()
            raise EngineError(f"request failed: {exc}") from exc
        if status != 200:
            raise EngineError(f"HTTP {status}: {body.decode(errors='replace')[:2000]}")
        return json.loads(body)

    def _post_stream(self, path: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        """A streamed request's SSE data frames, as JSON in arrival order (to `[DONE]` or the end)."""
        self._check_alive()
        connection = self._connection()
        try:
            connection.request("POST", path, json.dumps({**request, "stream": True}),
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            if response.status != 200:
                raise EngineError(f"HTTP {response.status}: {response.read().decode(errors='replace')[:2000]}")
            return list(sse_data(response))
        except OSError as exc:
            self._check_alive()
            raise EngineError(f"stream failed: {exc}") from exc
        finally:
            connection.close()

    def chat(self, request: dict[str, Any]) -> Message:
        """A non-streaming chat completion."""
        return message_of(self._post("/v1/chat/completions", request))

    def stream(self, request: dict[str, Any]) -> list[Delta]:
        """A streamed chat completion (SSE), every delta in arrival order."""
        return [d for event in self._post_stream("/v1/chat/completions", request) for d in deltas_of(chat_chunk(event))]

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        """A non-streaming Responses API request (`POST /v1/responses`): the response object."""
        return self._post("/v1/responses", request)

    def response_events(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        """A streamed Responses API request: every event, as the JSON of its SSE data, in arrival order."""
        return self._post_stream("/v1/responses", request)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def _lines(response: http.client.HTTPResponse) -> Iterator[str]:
    """The body's lines as they arrive, read in whatever pieces the server sent (not a read per line)."""
    pending = b""
    while piece := response.read1(1 << 16):
        *lines, pending = (pending + piece).split(b"\n")
        for line in lines:
            yield line.decode().rstrip("\r")
    if pending:
        yield pending.decode().rstrip("\r")


def sse_data(response: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """Each SSE frame's data as JSON, to `[DONE]`; a frame the server names `error` is the request's failure."""
    event = None
    for line in _lines(response):
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
            if data == "[DONE]":
                return
            if event == "error":
                raise EngineError(f"SSE error event: {data[:2000]}")
            yield json.loads(data)
        elif not line:
            event = None


def chat_chunk(event: dict[str, Any]) -> dict[str, Any]:
    """A chat completion chunk (a frame without choices is none)."""
    if "choices" not in event:
        raise EngineError(f"SSE frame without choices: {json.dumps(event)[:2000]}")
    return event


def message_of(response: Mapping[str, Any]) -> Message:
    choice = response["choices"][0]
    message = choice["message"]
    calls = tuple(ToolCall(name=c["function"]["name"], arguments=c["function"].get("arguments") or "",
                           id=c.get("id") or "") for c in message.get("tool_calls") or ())
    return Message(content=message.get("content") or "", reasoning=message.get("reasoning_content") or "",
                   tool_calls=calls, finish_reason=choice.get("finish_reason"))


def deltas_of(event: Mapping[str, Any]) -> list[Delta]:
    out = []
    for choice in event["choices"]:
        delta = choice.get("delta") or {}
        calls = tuple(ToolCallDelta(index=c.get("index", 0), id=c.get("id"), type=c.get("type"),
                                    name=(c.get("function") or {}).get("name"),
                                    arguments=(c.get("function") or {}).get("arguments"))
                      for c in delta.get("tool_calls") or ())
        out.append(Delta(content=delta.get("content"), reasoning=delta.get("reasoning_content"),
                         tool_calls=calls, finish_reason=choice.get("finish_reason")))
    return [d for d in out if not d.empty]


if __name__ == "__main__" and sys.argv[1:2] == [SERVE_FLAG]:
    server_main(sys.argv[2])
