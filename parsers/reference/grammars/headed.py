"""A codec behind a fixed text head: MARKER HEAD body, where the body is read by another codec.

GigaChat 3 opens its function call message with `<|message_sep|>`, then the text `\\n\\nfunction
call<|role_sep|>\\n`, then the call object. Until the head has been read whole nothing is decided; text that
leaves the head is no call: it goes back as content, without the marker.
"""

from __future__ import annotations

from ..calls import PartialCall
from ..machine import SectionCodec


class Headed:
    def __init__(self, head: str, body: SectionCodec) -> None:
        self.head = head
        self.body = body
        self.read = ""  # the part of the head read so far
        self.inside = False  # the head has been read: the body codec reads the rest
        self.stray = ""

    @property
    def calls(self) -> list[PartialCall]:
        return self.body.calls

    def feed(self, text: str) -> str | None:
        if self.inside:
            return self._body_feed(text)
        self.read += text
        if self.read.startswith(self.head):
            rest, self.read, self.inside = self.read[len(self.head) :], "", True
            return self._body_feed(rest)
        if self.head.startswith(self.read):
            return None
        back, self.read = self.read, ""
        return back

    def _body_feed(self, text: str) -> str | None:
        leftover = self.body.feed(text)
        self._take_stray()
        return leftover

    def _take_stray(self) -> None:
        self.stray, self.body.stray = self.stray + self.body.stray, ""

    def finish(self) -> None:
        if not self.inside:
            self.stray, self.read = self.read, ""
            return
        self.body.finish()
        self._take_stray()
