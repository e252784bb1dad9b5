"""Poolside Laguna: GLM-4.7's grammar (its tags spelled out in plain text are the same strings)."""

from __future__ import annotations

from fixtures.families import laguna as f

from .glm45 import grammar

GRAMMAR = grammar(f.FORMAT)
