"""IQuest-Q1: GLM-4.7's grammar with the `<iquest_tool_call>` wrapper."""

from __future__ import annotations

from fixtures.families import iquest_q1 as f

from .glm45 import grammar

GRAMMAR = grammar(f.FORMAT)
