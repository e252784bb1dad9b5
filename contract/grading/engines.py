"""The engines the matrix grades: one declaration each, from which everything else derives.

An engine's `name` is its one spelling: `--engine NAME`, the nox session `grade(engine='NAME')`, the parser
names `NAME/…` in results, `fixtures/expectations/NAME.toml`, `reports/out/NAME/`. Its adapter is the package
`parsers.<package>` (the name as a Python identifier). The install fields say what its grade virtualenv needs;
`noxfile.py`, `contract.grading.adapter` and the tests read them here, and a test holds README's engine table to them
(its version, adapter package and parser count, and for an engine graded through a server, that it says so).

Standard library only: nox imports this before any project dependency is installed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineEntry:
    """One engine the matrix grades, and what grading it needs."""

    name: str
    title: str  # as README and the matrix name it
    distribution: str | None = None  # on PyPI; None: this project's own reference parsers
    version: str | None = None  # pinned
    pinned: bool = True  # installed --no-deps with parsers/pins/<distribution>-<version>.pins.txt
    torch: bool = False  # imports torch: the CPU build is installed first (the engine's metadata would pull CUDA)
    harmony_vocab: bool = False  # grades the Harmony family on o200k_harmony ids: needs o200k_base.tiktoken, offline
    server: bool = False  # graded over an HTTP server the adapter starts on 127.0.0.1 (its repros start one too)
    repro_sample: tuple[int, int] = (0, 0)  # known-broken and passing cells `nox -s repro -- --verify` checks

    @property
    def package(self) -> str:
        """The adapter package under `parsers/`."""
        return self.name.replace("-", "_")

    @property
    def module(self) -> str:
        return f"parsers.{self.package}"

    @property
    def requirement(self) -> str | None:
        """What pip installs (`distribution==version`); None for the reference."""
        return f"{self.distribution}=={self.version}" if self.distribution else None

    @property
    def pins_file(self) -> str | None:
        """The pin file's name under `parsers/pins/`, for a pinned engine."""
        return f"{self.distribution}-{self.version}.pins.txt" if self.distribution and self.pinned else None


ENGINES: dict[str, EngineEntry] = {entry.name: entry for entry in (
    EngineEntry("reference", "reference"),
    EngineEntry("vllm", "vLLM", "vllm", "0.33.0", torch=True, harmony_vocab=True, repro_sample=(4, 2)),
    EngineEntry("sglang", "SGLang", "sglang", "0.5.23", torch=True, repro_sample=(4, 2)),
    # a small Rust wheel with one dependency (pydantic): installed normally, no pin file needed
    EngineEntry("openai-harmony", "openai-harmony", "openai-harmony", "0.0.8", pinned=False, harmony_vocab=True,
                repro_sample=(2, 2)),
    EngineEntry("lmdeploy", "lmdeploy", "lmdeploy", "0.18.0", torch=True, repro_sample=(4, 2)),
    EngineEntry("vllm-mlx", "vllm-mlx", "vllm-mlx", "0.6.0", repro_sample=(4, 2)),
    # the Rust frontend, driven over HTTP
    EngineEntry("dynamo", "Dynamo", "ai-dynamo-runtime", "1.6.1", server=True, harmony_vocab=True, repro_sample=(4, 2)),
    EngineEntry("transformers", "transformers", "transformers", "5.23.0", repro_sample=(3, 2)),
)}
