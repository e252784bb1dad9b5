"""Cohere Command 4: Command 3's grammar (cohere_action) with the answer in `<|START_TEXT|>…<|END_TEXT|>`."""

from __future__ import annotations

from fixtures.families import cohere_command4 as f

from .cohere_action import grammar

GRAMMAR = grammar(f.START_TEXT, f.END_TEXT)
