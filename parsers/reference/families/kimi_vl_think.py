"""Kimi-VL-Thinking: `◁think▷…◁/think▷` reasoning and no tool sections (the family has no tool format)."""

from __future__ import annotations

from parsers import RequestContext

from ..machine import Grammar, SectionCodec


def _no_section(marker: str, context: RequestContext) -> SectionCodec:
    raise ValueError(f"Kimi-VL has no tool sections: nothing opens one ({marker!r})")


GRAMMAR = Grammar(starts=(), open=_no_section)
