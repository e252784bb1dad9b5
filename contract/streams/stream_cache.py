"""Token streams (and tokenizer files) kept on disk beside the vocabularies they come from, so a process
needs no tokenizer.

Loading a real vocabulary costs a grading process about a second each (nine of them: several seconds in
every worker), while the streams they give are a pure function of the tokenizer and the rendered sample.
So each stream is stored once, under `<vocabulary cache>/streams/`, keyed by everything it depends on
(the vocabulary's label and its edits, or the synthetic BPE's training input; the tokenizers library's
version; the markers kept whole; the rendered text and where its markup lies), and read back by every
later process. A file that cannot be read is computed again; nothing else changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import tokenizers

from .vocabulary import cache_dir


def key(tokenizer_identity: object, markers: tuple[str, ...] | None, runs: list[tuple[bool, str]]) -> str:
    """What a stream depends on, hashed: the tokenizer, the markers kept whole, the text as it is encoded."""
    basis = json.dumps([tokenizers.__version__, tokenizer_identity, markers, runs], ensure_ascii=False)
    return hashlib.sha256(basis.encode()).hexdigest()


def _path(digest: str, kind: str = "streams") -> Path:
    return cache_dir() / kind / digest[:2] / f"{digest}.json"


def _write(path: Path, text: str) -> None:
    """Atomically: concurrent workers may race to write the same file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def saved(digest: str, kind: str, content: Callable[[], str]) -> Path:
    """A file of `kind` under its key, written once from `content`."""
    path = _path(digest, kind)
    if not path.exists():
        _write(path, content())
    return path


def cached(digest: str, compute: Callable[[], tuple[tuple[int, ...], tuple[str, ...]]]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """(ids, pieces) from the cache, or computed and stored."""
    path = _path(digest)
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        return tuple(stored["ids"]), tuple(stored["pieces"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    ids, pieces = compute()
    with contextlib.suppress(OSError):  # a read-only cache: computed every time, as before
        _write(path, json.dumps({"ids": ids, "pieces": pieces}, ensure_ascii=False))
    return ids, pieces
