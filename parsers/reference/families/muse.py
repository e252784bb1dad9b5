"""Muse is a sequence of recipient-addressed messages, ATEM calls in tool messages: its own machine."""

from __future__ import annotations

from parsers import Family, ParserUnderTest

from ..muse import MuseParser


def build(family: Family) -> ParserUnderTest:
    return MuseParser(family)
