"""The checks of DESIGN.md, each a small function returning the failures it finds.

Batch cells run `expected`, `finish_reason`, `markers` and `conservation`; streaming cells add
`stream_equals_batch`, `delta_protocol`, `duplication` and marker fragments, and measure holdback. A message read
from the Responses API adds the faults of that surface's protocol (`responses`, `contract.grading.responses`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..cases.expected import Expected, ExpectedMessage
from ..cases.family import Sample
from ..cases.model import Chunk, Delta, Message
from ..cases.rendering import Kind
from .assembly import assemble
from .compare import matches, normalized, squeeze
from .record import Failure


@dataclass(frozen=True)
class StreamRun:
    """What one chunking produced: the deltas returned for each chunk, then those of the flush."""

    chunks: tuple[Chunk, ...]
    per_chunk: tuple[tuple[Delta, ...], ...]
    final: tuple[Delta, ...]

    @property
    def deltas(self) -> list[Delta]:
        return [d for group in self.per_chunk for d in group] + list(self.final)


def expected(wanted: Expected, observed: Message) -> tuple[list[Failure], list[str], ExpectedMessage]:
    """Match against the acceptable outcomes; returns failures, notes and the outcome judged against (of those
    that match, the first whose finish_reason is the observed one: outcomes may differ in it alone)."""
    outcomes = wanted.outcomes
    matching = [(outcome, verdict) for outcome in outcomes if (verdict := matches(outcome, observed)).ok]
    if matching:
        outcome, verdict = next(((o, v) for o, v in matching if observed.finish_reason in (None, o.finish_reason)),
                                matching[0])
        notes = list(verdict.notes)
        if len(outcomes) > 1:
            notes.append(f"acceptable outcome: {outcome.label}")
        return [], notes, outcome
    verdict = matches(wanted.preferred, observed)
    failures = [Failure("expected", p) for p in verdict.problems]
    if len(outcomes) > 1:
        failures.append(Failure("expected", f"matches none of: {', '.join(o.label for o in outcomes)}"))
    return failures, list(verdict.notes), wanted.preferred


def finish_reason(outcome: ExpectedMessage, observed: Message) -> list[Failure]:
    if observed.finish_reason is None or observed.finish_reason == outcome.finish_reason:
        return []
    return [Failure("finish_reason", f"expected {outcome.finish_reason!r}, observed {observed.finish_reason!r}")]


def markers_leaked(markers: Sequence[str], outcome: ExpectedMessage, observed: Message) -> list[Failure]:
    """No marker in content or reasoning beyond the ones the outcome itself contains as text."""
    if outcome.markup_allowed:
        return []
    failures = []
    for field in ("content", "reasoning"):
        want, got = getattr(outcome, field), getattr(observed, field)
        for marker in markers:
            if got.count(marker) > want.count(marker):
                failures.append(Failure("markers", f"{marker!r} leaked into {field}"))
    return failures


def _fragment(piece: str, markers: Sequence[str]) -> str | None:
    """A proper prefix of a marker at the end of a piece, or a proper suffix at its start."""
    for marker in markers:
        for size in range(len(marker) - 1, 1, -1):
            if piece.endswith(marker[:size]) or piece.startswith(marker[-size:]):
                return marker
    return None


def fragments(markers: Sequence[str], outcome: ExpectedMessage, run: StreamRun) -> list[Failure]:
    """A delta whose text carries part of a split marker, when that text is not in the expected output."""
    if outcome.markup_allowed:
        return []
    failures = []
    for field in ("content", "reasoning"):
        want = getattr(outcome, field).strip()
        shown = ""
        for delta in run.deltas:
            piece = getattr(delta, field)
            if not piece:
                continue
            shown += piece
            if want.startswith(shown.strip()):
                continue
            marker = _fragment(piece, markers)
            if marker:
                failures.append(Failure("markers", f"fragment of {marker!r} leaked into {field}: {piece!r}"))
                break
    return failures


def surfaced(observed: Message, deltas: Sequence[Delta]) -> Message:
    """The assembled stream with what its last delta says of another surface's layout and faults (`Message.items`)."""
    last = next((d for d in reversed(deltas) if d.items is not None or d.faults), None)
    return observed if last is None else dataclasses.replace(observed, items=last.items, faults=last.faults)


def _unblank(items: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The item layout without blank message items (as whitespace-only content is no difference in chat)."""
    return items if items is None else tuple(i for i in items if i != "message(blank)")


def stream_equals_batch(streamed: Message, batch: Message, *, keep_ids: bool) -> list[Failure]:
    a, b = normalized(streamed, keep_ids=keep_ids), normalized(batch, keep_ids=keep_ids)
    if streamed.items is not None and batch.items is not None and _unblank(streamed.items) != _unblank(batch.items):
        a["items"], b["items"] = list(streamed.items), list(batch.items)
    if a == b:
        return []
    differing = [k for k in a if a[k] != b[k]]
    detail = "; ".join(f"{k}: stream {json.dumps(a[k], ensure_ascii=False)[:120]} "
                       f"vs batch {json.dumps(b[k], ensure_ascii=False)[:120]}" for k in differing)
    return [Failure("stream_equals_batch", detail)]


def delta_protocol(run: StreamRun) -> list[Failure]:
    """OpenAI tool-call deltas: first delta of a call has id, type and name; ids stable; indexes contiguous."""
    problems: list[str] = []
    ids: dict[int, str | None] = {}
    finished = False
    for n, delta in enumerate(run.deltas):
        if finished and not delta.empty:
            problems.append(f"delta {n} arrives after finish_reason")
        if delta.finish_reason is not None:
            finished = True
        for call in delta.tool_calls:
            if call.index not in ids:
                if call.index != len(ids):
                    problems.append(f"delta {n}: call index {call.index} appears before index {len(ids)}")
                missing = [k for k, v in (("id", call.id), ("type", call.type), ("name", call.name)) if not v]
                if missing or call.type != "function":
                    problems.append(f"delta {n}: first delta of call {call.index} lacks {', '.join(missing) or 'type'}")
                ids[call.index] = call.id
                continue
            if call.id is not None:
                what = "repeated (a client concatenates it)" if call.id == ids[call.index] else "changed"
                problems.append(f"delta {n}: id of call {call.index} {what}: {call.id!r}")
            if call.name:
                problems.append(f"delta {n}: name of call {call.index} sent again (a client concatenates it)")
    return [Failure("delta_protocol", p) for p in dict.fromkeys(problems)][:5]


def duplication(outcome: ExpectedMessage, observed: Message, run: StreamRun) -> list[Failure]:
    """Streamed text sent twice: a piece that repeats what was just sent, or shows up more often
    than the expected output holds it."""
    failures = []
    for field in ("content", "reasoning"):
        want, got = getattr(outcome, field), getattr(observed, field)
        if len(squeeze(got)) <= len(squeeze(want)):
            continue
        shown = ""
        for delta in run.deltas:
            piece = getattr(delta, field) or ""
            if not piece.strip():
                shown += piece
                continue
            resent = shown.endswith(piece) and not squeeze(want).startswith(squeeze(shown + piece))
            repeated = len(piece.strip()) >= 3 and got.count(piece.strip()) > max(1, want.count(piece.strip()))
            if resent or repeated:
                failures.append(Failure("duplication", f"{field} repeats {piece[:60]!r}"))
                break
            shown += piece
    return failures


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in (k, *_leaves(v))]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value if isinstance(value, str) else json.dumps(value)]


@functools.lru_cache(maxsize=32)  # most chunkings of a sample give the same message
def _haystack(observed: Message) -> str:
    parts = [observed.content, observed.reasoning]
    for call in observed.tool_calls:
        parts += [call.name, call.arguments]
        with contextlib.suppress(ValueError):
            parts += _leaves(json.loads(call.arguments))
    return squeeze("\n".join(parts))


def conserved_pieces(sample: Sample) -> tuple[str, ...]:
    """The narration, reasoning and argument pieces of the input that must survive in the output."""
    return tuple(p for kind in (Kind.CONTENT, Kind.REASONING, Kind.ARGUMENTS) for p in sample.rendered.pieces(kind))


@functools.lru_cache(maxsize=1024)  # the same pieces are looked for in every run of a sample
def _squeezed(piece: str) -> str:
    return squeeze(piece)


def conservation(pieces: Sequence[str], observed: Message) -> list[Failure]:
    """Every narration, reasoning and argument piece of the input survives somewhere in the output."""
    haystack = _haystack(observed)
    lost = []
    for piece in pieces:
        if _squeezed(piece) in haystack:
            continue
        try:
            leaves = _leaves(json.loads(piece))
        except ValueError:
            leaves = [piece]
        if any(squeeze(leaf) not in haystack for leaf in leaves):
            lost.append(piece)
    return [Failure("conservation", f"lost {len(p)} chars: {p[:80]!r}") for p in lost]


def _kept(pieces: Sequence[str], dropped: Sequence[str]) -> Sequence[str]:
    """The pieces an outcome keeps: each piece it drops is taken out once (another call may hold the same text)."""
    if not dropped:
        return pieces
    left = list(pieces)
    for piece in dropped:
        left.remove(piece)
    return left


def judge_message(wanted: Expected, markers: Sequence[str], pieces: Sequence[str],
                  observed: Message) -> tuple[list[Failure], list[str], ExpectedMessage]:
    """Every check of a one-shot result (and of an assembled stream): failures, notes, the outcome judged."""
    failures, notes, outcome = expected(wanted, observed)
    failures += finish_reason(outcome, observed)
    failures += markers_leaked(markers, outcome, observed)
    failures += conservation(_kept(pieces, outcome.dropped), observed)
    failures += [Failure("responses", fault) for fault in observed.faults]
    return failures, notes, outcome


def judge_stream(wanted: Expected, markers: Sequence[str], pieces: Sequence[str], run: StreamRun,
                 batch: Message | None, *, keep_ids: bool) -> tuple[list[Failure], list[str], Message]:
    """Every check of one streamed run; `batch` is the one-shot result (None: batch parsing raised)."""
    observed = surfaced(assemble(run.deltas), run.deltas)
    failures, notes, outcome = judge_message(wanted, markers, pieces, observed)
    failures += fragments(markers, outcome, run)
    failures += delta_protocol(run)
    failures += duplication(outcome, observed, run)
    if batch is not None:
        failures += stream_equals_batch(observed, batch, keep_ids=keep_ids)
    else:
        notes.append("stream_equals_batch not checked: batch parsing raised")
    return failures, notes, observed


INCREMENTAL_BOUND = 256  # payload characters a parser may withhold beyond an unfinished marker
INCREMENTAL_MODES = ("tokens", "bursts-2", "bursts-3", "bursts-5", "bursts-8", "boundaries", "random", "chars",
                     "responses-tokens")
_PAYLOAD = (Kind.CONTENT, Kind.REASONING, Kind.ARGUMENTS)  # call names are short, and spelled apart from ids


def _emitted(group: Sequence[Delta]) -> int:
    """Non-space characters a client received in these deltas: narration, reasoning and argument text."""
    if not group:
        return 0
    text = "".join((d.content or "") + (d.reasoning or "") for d in group)
    calls = "".join(c.arguments or "" for d in group for c in d.tool_calls)
    return _nonspace(text + calls)


def _nonspace(text: str) -> int:
    """len(squeeze(text)), without building it."""
    return sum(map(len, text.split()))


AMBIGUITY_REACH = 64  # how far back from a chunk's end a marker prefix is looked for


@functools.cache
def _marker_prefixes(markers: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """Index k: every proper prefix of k characters of a marker (k <= AMBIGUITY_REACH)."""
    longest = min(max((len(m) for m in markers), default=1) - 1, AMBIGUITY_REACH)
    return tuple(frozenset(m[:k] for m in markers if len(m) > k) for k in range(longest + 1))


@functools.lru_cache(maxsize=16)
def _ambiguity(text: str, markers: tuple[str, ...]) -> dict[int, int]:
    """`_ambiguous` of each end offset of this text asked so far (every chunking of a sample ends chunks at
    the same token boundaries)."""
    return {}


def _ambiguous(text: str, end: int, markers: Sequence[str]) -> int:
    """How many characters before `end` could still be the beginning of a marker."""
    known = _ambiguity(text, tuple(markers))
    if end not in known:
        prefixes = _marker_prefixes(tuple(markers))
        known[end] = next((k for k in range(min(len(prefixes) - 1, end), 0, -1) if text[end - k : end] in prefixes[k]),
                          0)
    return known[end]


@functools.lru_cache(maxsize=16)
def _counted_before(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Index i: non-space characters inside `spans` among the first i characters of `text` (once per sample)."""
    inside = bytearray(len(text))
    for start, end in spans:
        inside[start:end] = b"\x01" * (end - start)
    before = [0] * (len(text) + 1)
    count = 0
    for i, char in enumerate(text):
        if inside[i] and not char.isspace():
            count += 1
        before[i + 1] = count
    return tuple(before)


def payload_spans(sample: Sample) -> tuple[tuple[int, int], ...]:
    """Where the sample's payload lies: narration, reasoning and arguments."""
    return tuple((s.start, s.end) for s in sample.rendered.spans if s.kind in _PAYLOAD)


def withheld(text: str, payload: Sequence[tuple[int, int]], markers: Sequence[str], run: StreamRun) -> tuple[int, int]:
    """Incremental streaming: the most payload (non-space characters of narration, reasoning and
    arguments) that arrived before the latest chunk and was still not passed on once that chunk was fed,
    leaving out a possible marker prefix at the end of the text received; and the chunk where that
    happened. A parser may thus lag one delta (and whole mode, one chunk, never holds anything); argument
    text it re-encodes (XML values as JSON) counts as passed on however it is spelled, so the figure never
    overstates what was held."""
    before = _counted_before(text, tuple(payload))
    worst, at, end, shown = 0, -1, 0, 0
    for n, (chunk, group) in enumerate(zip(run.chunks, run.per_chunk, strict=True)):
        start, end = end, end + len(chunk.text)
        if group:
            shown += _emitted(group)
        held = before[min(start, end - _ambiguous(text, end, markers))] - shown
        if held > worst:
            worst, at = held, n
    return worst, at


def incremental(mode: str, worst: int, at: int, bound: int = INCREMENTAL_BOUND) -> list[Failure]:
    """The graded bound on withheld payload (its own check: a cell can be correct and still not stream);
    `bound`: INCREMENTAL_BOUND plus what the case makes every parser hold (`Family.held_by_rule`)."""
    if mode not in INCREMENTAL_MODES or worst <= bound:
        return []
    return [Failure("incremental", f"after chunk {at}, {worst} payload characters received before it were still "
                                   f"held beyond an unfinished marker (bound {bound}): a client saw "
                                   "nothing of them while they were generated")]


def visible_spans(sample: Sample) -> tuple[tuple[int, int], ...]:
    """Where the sample's visible text lies: narration and reasoning (what a stream may show as text)."""
    return tuple((s.start, s.end) for s in sample.rendered.spans if s.kind in (Kind.CONTENT, Kind.REASONING))


def holdback(text: str, visible: Sequence[tuple[int, int]], markers: Sequence[str], run: StreamRun) -> int:
    """Most visible characters withheld at any point beyond a possible marker prefix at the end (`visible`:
    where the text holds narration and reasoning, `visible_spans`)."""
    visible_before = _counted_before(text, tuple(visible))
    worst, end, shown = 0, 0, 0
    for chunk, group in zip(run.chunks, run.per_chunk, strict=True):
        end += len(chunk.text)
        if group:
            shown += sum(_nonspace((d.content or "") + (d.reasoning or "")) for d in group)
        worst = max(worst, visible_before[end - _ambiguous(text, end, markers)] - shown)
    return worst
