"""The scanning loop of codecs that read a section as text between markers.

A subclass says which markers may come next (`_markers`, from its state), what to do with the
text before one (`_absorb`) and with the marker itself (`_on`, True when the section ended). Text
that could still begin a marker is kept back until more arrives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..scan import find_first, partial_tail

_NAME = re.compile(r"\s*[\w.\-:/@+]*\s*")


def not_a_name(text: str) -> bool:
    """Whether text read as a function name (surrounding whitespace aside) cannot be one: it holds a space,
    a tag or any other character no tool name has, so it is prose or markup, never a name."""
    return _NAME.fullmatch(text) is None


def not_a_start(text: str, markers: Sequence[str]) -> bool:
    """Whether text right after a start marker, whitespace aside, can begin none of `markers`."""
    head = text.lstrip()
    return bool(head) and not any(head.startswith(m) or m.startswith(head) for m in markers)


class MarkerStepper:
    buffer: str = ""

    def _markers(self) -> Sequence[str]:
        raise NotImplementedError

    def _absorb(self, text: str) -> None:
        raise NotImplementedError

    def _on(self, marker: str) -> bool:
        raise NotImplementedError

    def _give_back(self) -> str | None:
        """Checked before each scan: the text (after the start marker) to hand back as content when what was
        read shows the section is no call; the section then ends. None while it may still be one."""
        return None

    def _upcoming(self) -> str:
        """The buffer up to the next marker, or up to what could still begin one."""
        markers = self._markers()
        hit = find_first(self.buffer, markers)
        if hit is not None:
            return self.buffer[: hit[0]]
        return self.buffer[: len(self.buffer) - partial_tail(self.buffer, markers)]

    def _waiting(self) -> None:
        """Called when the text so far holds no further marker: stream what is certain."""

    def feed(self, text: str) -> str | None:
        """Consume text; once the section has ended, return the text that follows it."""
        self.buffer += text
        while True:
            back = self._give_back()
            if back is not None:
                self.buffer = ""
                return back
            markers = self._markers()
            hit = find_first(self.buffer, markers)
            if hit is None:
                keep = partial_tail(self.buffer, markers)
                self._absorb(self.buffer[: len(self.buffer) - keep])
                self.buffer = self.buffer[len(self.buffer) - keep :]
                self._waiting()
                return None
            at, marker = hit
            self._absorb(self.buffer[:at])
            self.buffer = self.buffer[at + len(marker) :]
            if self._on(marker):
                return self.buffer
