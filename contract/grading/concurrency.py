"""The `concurrent` mode: the case's stream and a partner request's, interleaved through one parser under test.

Both streams are opened on the same parser object (one server: its parser classes, tokenizer and module
state), then fed chunk by chunk as `contract.streams.interleave` orders them, one token per chunk. Each stream
must come out exactly as it does alone (`Subject.streamed` of the same chunking: the `tokens` mode's run); a
difference is state one request leaked into the other. The cell judges isolation only: what the solo run
gets wrong is the other modes' business.

An engine whose sessions replay their whole request at the finish (graded over HTTP) has both finishes sent
at once, from two threads, so that both requests are in flight in its server together.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..cases.catalog import Case
from ..cases.model import Chunk, Delta, Message
from ..streams.chunking import token_chunks
from ..streams.interleave import CASE, PARTNER, PARTNERS, Step, schedule
from .adapter import StreamSession
from .assembly import assemble
from .compare import normalized
from .progress import Call
from .record import Failure
from .subject import Graded, Subject, crashed

__all__ = ["PARTNERS", "grade_concurrent", "interleaved", "token_by_token"]


def token_by_token(subject: Subject) -> tuple[Chunk, ...]:
    """The chunking each stream gets: one token per engine step (the `tokens` mode's)."""
    return token_chunks(subject.stream, range(1, len(subject.stream.ids)))


@dataclass
class _Stream:
    subject: Subject
    chunks: tuple[Chunk, ...]
    session: StreamSession | None = None
    per_chunk: list[Sequence[Delta]] = field(default_factory=list)
    final: Sequence[Delta] = ()
    error: BaseException | None = None

    @property
    def deferred(self) -> bool:
        """Does the session replay its whole request at the finish (an engine graded over HTTP)?"""
        return bool(getattr(self.session, "replays_at_finish", False))


def _timed(subject: Subject, call: Call, index: int, action: Callable[..., Any], *args: Any) -> Any:
    """One parser call, `action(*args)`, announced and counted as the subject's streaming CPU time."""
    subject.progress.enter(call, index)
    started = time.process_time()
    try:
        return action(*args)
    finally:
        spent = time.process_time() - started
        subject.spent_s += spent
        subject.cpu_s["stream"] += spent
        subject.progress.leave()


def interleaved(case: Subject, partner: Subject) -> tuple[_Stream, _Stream]:
    """Both streams run through `case.parser` in the schedule's order; a stream whose call raises stops there."""
    streams = (_Stream(case, token_by_token(case)), _Stream(partner, token_by_token(partner)))
    order = schedule(len(streams[CASE].chunks), len(streams[PARTNER].chunks))
    case.progress.chunking(tuple(_label(streams, step) for step in order))
    for stream in streams:
        try:
            stream.session = _timed(case, Call.OPEN, -1, case.parser.open_stream, stream.subject.sample.context)
        except Exception as exc:  # noqa: BLE001 - an outcome
            stream.error = exc
    deferred_finishes: list[_Stream] = []
    for position, step in enumerate(order):
        stream = streams[step.stream]
        if stream.error is not None or stream.session is None:
            continue
        session = stream.session
        try:
            if step.index is not None:
                stream.per_chunk.append(tuple(_timed(case, Call.FEED, position, session.feed, stream.chunks[step.index])))
            elif stream.deferred:
                deferred_finishes.append(stream)
            else:
                stream.final = tuple(_timed(case, Call.FINISH, position, session.finish, stream.subject.sample.stop))
        except Exception as exc:  # noqa: BLE001 - an outcome
            stream.error = exc
    if deferred_finishes:
        _finish_together(case, deferred_finishes)
    return streams


def _finish_together(case: Subject, streams: Sequence[_Stream]) -> None:
    """Finish sessions that replay at the finish all at once, so that their requests overlap in the server."""

    def finish(stream: _Stream) -> None:
        assert stream.session is not None
        try:
            stream.final = tuple(stream.session.finish(stream.subject.sample.stop))
        except Exception as exc:  # noqa: BLE001 - an outcome
            stream.error = exc

    with ThreadPoolExecutor(len(streams)) as pool:
        _timed(case, Call.FINISH, -1, lambda: list(pool.map(finish, streams)))


def _label(streams: tuple[_Stream, _Stream], step: Step) -> str:
    """A step as a hang report shows it: `B:` marks the partner's chunks."""
    prefix = "" if step.stream == CASE else "B:"
    if step.index is None:
        return f"{prefix}(finish)"
    return prefix + streams[step.stream].chunks[step.index].text


def _result(stream: _Stream) -> Message | BaseException:
    if stream.error is not None:
        return stream.error
    return assemble([d for group in stream.per_chunk for d in group] + list(stream.final))


def _shown(result: Message | BaseException, keep_ids: bool) -> Any:
    if isinstance(result, BaseException):
        return f"raised {type(result).__name__}: {result}"
    return normalized(result, keep_ids=keep_ids)


def _differences(label: str, solo: Message | BaseException, together: Message | BaseException,
                 keep_ids: bool) -> list[Failure]:
    a, b = _shown(solo, keep_ids), _shown(together, keep_ids)
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        detail = "; ".join(f"{k}: alone {json.dumps(a[k], ensure_ascii=False)[:120]} "
                           f"vs concurrent {json.dumps(b[k], ensure_ascii=False)[:120]}" for k in a if a[k] != b[k])
    else:
        detail = f"alone {str(a)[:160]} vs concurrent {str(b)[:160]}"
    return [Failure("concurrent", f"{label}: {detail}")]


def _solo(subject: Subject) -> Message | BaseException:
    """The stream alone, with the same chunking (shared with the `tokens` mode's run)."""
    streamed = subject.streamed(token_by_token(subject))
    if streamed.error is not None:
        return streamed.error
    assert streamed.observed is not None
    return streamed.observed


def grade_concurrent(case: Subject, partner: Subject, partner_case: Case) -> Graded:
    """The cell: both streams as they come out interleaved, each against its own solo run."""
    solo = (_solo(case), _solo(partner))
    streams = interleaved(case, partner)
    together = tuple(_result(s) for s in streams)
    failures = _differences("this request", solo[CASE], together[CASE], case.sample.case.native_ids)
    failures += _differences(f"the partner request ({partner_case.id})", solo[PARTNER], together[PARTNER],
                             partner_case.native_ids)
    note = (f"interleaved with {partner_case.id} ({len(streams[PARTNER].chunks)} tokens), one token per step, "
            "through one parser; each request judged against its own run alone")
    observed = together[CASE]
    chunking = tuple(c.text for c in streams[CASE].chunks)
    if isinstance(observed, BaseException) and isinstance(solo[CASE], Message):
        return Graded("fail", tuple(failures), (note,), None, chunking, error=crashed(observed).error)
    return Graded("fail" if failures else "pass", tuple(failures), (note,),
                  observed if isinstance(observed, Message) else None, chunking)
