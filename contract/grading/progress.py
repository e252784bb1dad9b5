"""What a grading worker is doing right now, readable by the process that may have to stop it.

The worker announces every parser call (and the chunking it is feeding) in a small memory-mapped
file; the controlling process reads it to tell a hung parser from a slow one and, when it stops a
worker, to say what the parser was doing: which call, which chunk. Writing costs a few hundred
nanoseconds per call, so it runs for every call of every cell.
"""

from __future__ import annotations

import enum
import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

_HEADER = struct.Struct("<QqII")  # seq (changes at every call start and end), chunk index, call, chunking bytes
_BLOB = 64  # the chunking (JSON list of delta texts) starts here
SIZE = 1 << 20


class Call(enum.IntEnum):
    """What the worker is inside of; IDLE between parser calls (the framework's own work)."""

    IDLE = 0
    LOAD = 1  # importing the engine
    BUILD = 2  # building the parser under test
    PARSE = 3
    OPEN = 4
    FEED = 5
    FINISH = 6

    @property
    def label(self) -> str:
        return {Call.IDLE: "between parser calls", Call.LOAD: "loading the engine",
                Call.BUILD: "building the parser", Call.PARSE: "parse() (one shot)",
                Call.OPEN: "opening the stream", Call.FEED: "feed()", Call.FINISH: "finish()"}[self]


class Progress:
    """The worker's side. The base class records nothing (grading in-process, as tests and benches do)."""

    def enter(self, call: Call, index: int = -1) -> None:
        """A parser call starts."""

    def leave(self) -> None:
        """It returned (or raised)."""

    def chunking(self, texts: tuple[str, ...]) -> None:
        """The chunking the next feed() calls walk through."""


class SharedProgress(Progress):
    """Writes to a memory-mapped file that `Snapshot.read` reads from another process."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("r+b")
        self._map = mmap.mmap(self._file.fileno(), SIZE)
        self._seq = 0
        self._blob = 0

    def _write(self, call: Call, index: int) -> None:
        self._seq += 1
        _HEADER.pack_into(self._map, 0, self._seq, index, int(call), self._blob)

    def enter(self, call: Call, index: int = -1) -> None:
        self._write(call, index)

    def leave(self) -> None:
        self._write(Call.IDLE, -1)

    def chunking(self, texts: tuple[str, ...]) -> None:
        blob = json.dumps(list(texts), ensure_ascii=False).encode()
        if len(blob) > SIZE - _BLOB:
            blob = b""  # too long to keep: the snapshot will say the chunk index only
        self._map[_BLOB:_BLOB + len(blob)] = blob
        self._blob = len(blob)
        self._write(Call.IDLE, -1)


def create(path: Path) -> Path:
    """A zeroed progress file for one worker."""
    with path.open("wb") as file:
        file.truncate(SIZE)
    return path


@dataclass(frozen=True)
class Snapshot:
    """What the worker last announced."""

    seq: int
    call: Call
    index: int
    chunk: str | None  # the delta text being fed, when known
    chunks: int | None  # how many deltas the chunking has

    @classmethod
    def read(cls, path: Path, chunk: bool = True) -> Snapshot:
        """The header (cheap, for polling), and with `chunk` the delta text being fed."""
        with path.open("rb") as file:
            data = file.read(SIZE if chunk else _HEADER.size)
        seq, index, call, blob = _HEADER.unpack_from(data, 0)
        texts: list[str] | None = None
        if blob and chunk:
            try:
                texts = json.loads(data[_BLOB:_BLOB + blob].decode())
            except ValueError:  # caught mid-write
                texts = None
        chunk = texts[index] if texts is not None and 0 <= index < len(texts) else None
        return cls(seq, Call(call), index, chunk, len(texts) if texts is not None else None)

    def describe(self) -> str:
        """`feed() of delta 17 of 6021 ('…')`, or the call's label."""
        if self.call is not Call.FEED:
            return self.call.label
        where = f"feed() of delta {self.index + 1}" + (f" of {self.chunks}" if self.chunks else "")
        return where + (f" ({self.chunk[:80]!r})" if self.chunk is not None else "")
