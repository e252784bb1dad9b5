"""Parsers under test: `reference/` (this project's own) and one adapter per external engine."""
