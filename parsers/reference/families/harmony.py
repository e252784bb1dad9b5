"""Harmony is a sequence of channel messages, not marker-delimited sections: its own machine."""

from __future__ import annotations

from parsers import Family, ParserUnderTest

from ..harmony import HarmonyParser


def build(family: Family) -> ParserUnderTest:
    return HarmonyParser(family)
