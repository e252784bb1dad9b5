"""Inkling is a sequence of typed content blocks, not marker-delimited sections: its own machine."""

from __future__ import annotations

from parsers import Family, ParserUnderTest

from ..inkling import InklingParser


def build(family: Family) -> ParserUnderTest:
    return InklingParser(family)
