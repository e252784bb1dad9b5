"""Text a section holds between its calls: whitespace alone is framing and dropped, narration is content.

Narration keeps its own whitespace however it is streamed: whitespace is held until the next non-space
character shows it lies inside the narration (or until the gap ends: after narration it is the narration's
trailing whitespace, kept; alone it is framing, dropped). Feeding the gap in any chunking shows the same text.
"""

from __future__ import annotations


class Gap:
    def __init__(self) -> None:
        self.held = ""  # whitespace not yet known to belong to narration
        self.shown = False  # this gap has shown narration

    def add(self, text: str) -> str:
        """Take text from the gap; return what can be shown now."""
        self.held += text
        body = self.held.rstrip()
        if not body:
            return ""
        self.held, self.shown = self.held[len(body) :], True
        return body

    def end(self) -> str:
        """The gap ended (a call starts, the section ends): return what is left to show."""
        rest = self.held if self.shown else ""
        self.held, self.shown = "", False
        return rest
