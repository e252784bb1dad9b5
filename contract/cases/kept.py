"""What a parser keeps of a sample's text (its content, its reasoning), joined with the whitespace the sample
itself has between the kept pieces, so that a comparison can tell merged or split words from re-spaced ones.

Between two kept pieces lies markup a parser removes (a call, a tool section, a stray marker, a channel header):
- whitespace at either edge of that gap (`call.\\n<tool_call>…</tool_call>\\nDone.`) is the model's own
  separation of the two texts: the joined text keeps it, and a parser must keep a word boundary there;
- no whitespace at all in the gap (`call.<|tool_calls_section_begin|><|tool_calls_section_end|>Done.`): the
  model wrote the texts together, and a parser must not split them;
- whitespace only inside the markup (`call.<tool_call>\\n</tool_call>Done.`): a parser may drop the markup
  whole or keep the whitespace it holds, so both joinings are acceptable (the first, without it, preferred);
- the end of one message and the start of another (Harmony's preamble, then its final answer), no whitespace
  around: the texts are separate messages a parser puts into one field, so it may join them as written or
  with a line break between.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from .rendering import Kind, Rendered, Role

MAX_JOININGS = 8  # a sample with more optional separators than this is a rendering to simplify, not to grade


def kept_text(rendered: Rendered, ranges: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """The text at `ranges` (ascending, not overlapping) joined as above: every acceptable joining, the
    preferred first (one, unless a gap holds whitespace only inside its markup)."""
    if not ranges:
        return ("",)
    pieces = [rendered.text[start:end] for start, end in ranges]
    joiners = [joinings(rendered, end, start) for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False)]
    ways = list(product(*joiners))
    if len(ways) > MAX_JOININGS:
        raise ValueError(f"{len(ways)} ways to join the kept text {pieces!r}: simplify the rendering")
    return tuple(dict.fromkeys(pieces[0] + "".join(j + p for j, p in zip(way, pieces[1:], strict=True))
                               for way in ways))


def spans_of(rendered: Rendered, kind: Kind) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in rendered.spans if s.kind is kind]


def joinings(rendered: Rendered, start: int, end: int) -> tuple[str, ...]:
    """The acceptable whitespace between two kept pieces, from the gap `rendered.text[start:end]` (the preferred
    first)."""
    gap = rendered.text[start:end]
    edges = gap[: len(gap) - len(gap.lstrip())] + (gap[len(gap.rstrip()):] if gap.strip() else "")
    if edges:
        return (edges,)
    markup = [s for s in rendered.spans if s.kind is Kind.MARKUP and start <= s.start and s.end <= end]
    inside = "".join(ch for s in markup for ch in rendered.text[s.start : s.end] if ch.isspace())
    if not inside and any(s.role is Role.MESSAGE_END for s in markup):
        inside = "\n"
    return ("", inside) if inside else ("",)
