"""GigaChat 3: `<|message_sep|>`, the function call role, then one JSON call object ending the output."""

from __future__ import annotations

from fixtures.families import gigachat3 as f

from ..calls import PartialCall
from ..grammars.json_block import JsonBlock, JsonBlockSpec
from ..machine import Grammar, SectionCodec


# A codec behind a fixed text head: after `<|message_sep|>` comes the text `\n\nfunction call<|role_sep|>`, then
# the call object. Until the head has been read whole nothing is decided; text that leaves the head is no call: it
# goes back as content, without the marker.
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


SPEC = JsonBlockSpec(open=f.OPENER, close=f.MESSAGE_SEP, argument_keys=("arguments",))
# the head stops before its last newline: JsonBlock reads whitespace before the object itself, and hands prose
# after the role back with it (the newline keeps the words apart)
GRAMMAR = Grammar(starts=(f.MESSAGE_SEP,), open=lambda marker, context: Headed(f.HEAD.rstrip("\n"), JsonBlock(SPEC)))
