"""Untrusted text (model output, parser names, reasons) made inert for markdown and terminals.

Model text in a summary is attacker-controlled: a pull-request comment must not turn it into links,
images, HTML, @-mentions or issue references, and a terminal must not receive its escape sequences.
"""

from __future__ import annotations

import re

# C0/C1 controls (tab and newline included: one summary line per item), DEL, and the invisible
# format characters that reorder or hide text (bidi overrides and isolates, zero-widths, BOM)
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    )


def visible(text: str) -> str:
    """Control and invisible format characters spelled out (`\\x1b`, `\\u202e`, `\\n`)."""
    return _HIDDEN.sub(_visible, text)


def clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def inert_terminal(text: str, limit: int | None = None) -> str:
    """Text safe to print: no escape sequence, carriage return or bidi override reaches the terminal."""
    return clip(visible(text), limit)


def inert_markdown(text: str, limit: int | None = None, *, table: bool = True) -> str:
    """Text as a GitHub markdown code span: literal everywhere.

    Nothing inside a code span is markdown (no links, images, emphasis), HTML, autolink, mention or
    issue reference. The span's fence is longer than any backtick run inside; in a table cell `|` is
    escaped, the one character GitHub still reads there inside a code span.
    """
    shown = clip(visible(text), limit)
    if not shown.strip(" "):
        return "`" + shown + "`" if shown else ""
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    if table:
        shown = shown.replace("|", "\\|")
    return fence + pad + shown + pad + fence
