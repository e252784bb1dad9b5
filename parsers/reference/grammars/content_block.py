"""A block whose body is the answer itself: OPEN text CLOSE, shown as content (ERNIE-4.5's `<response>`).

Such a wrapper reads like a tool section to the machine but holds no call: everything up to CLOSE is content,
streamed as it arrives. The body is shown verbatim, the newlines the template writes after OPEN and before
CLOSE included: at the edges of the answer they are leading or trailing whitespace, which grading tolerates,
and between two blocks they are the only separation the model wrote (dropping them glues the answers'
words together). A CLOSE that never comes leaves the rest as content. `strays` are markers that mean nothing
inside the body (Cohere's lone `<|END_ACTION|>` in an answer): dropped where they stand.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..calls import PartialCall
from ..scan import find_first, partial_tail


@dataclass(frozen=True)
class ContentBlockSpec:
    close: str
    strays: tuple[str, ...] = ()


class ContentBlock:
    def __init__(self, spec: ContentBlockSpec) -> None:
        self.spec = spec
        self.calls: list[PartialCall] = []
        self.stray = ""  # the body: the machine shows it as content
        self.buffer = ""

    def feed(self, text: str) -> str | None:
        self.buffer += text
        close = self.spec.close
        markers = (close, *self.spec.strays)
        while hit := find_first(self.buffer, markers):
            at, marker = hit
            self.stray += self.buffer[:at]
            self.buffer = self.buffer[at + len(marker) :]
            if marker == close:
                leftover, self.buffer = self.buffer, ""
                return leftover
        keep = partial_tail(self.buffer, markers)
        self.stray += self.buffer[: len(self.buffer) - keep]
        self.buffer = self.buffer[len(self.buffer) - keep :]
        return None

    def finish(self) -> None:
        self.stray += self.buffer
        self.buffer = ""
