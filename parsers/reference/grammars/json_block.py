"""One call per block, written as a JSON object: OPEN {"name": N, "arguments": {...}} CLOSE.

Hermes / Qwen2.5 / Qwen3 and its relatives. Key order is free. The arguments value is streamed
as the model writes it, holding back trailing `}` and whitespace that may belong to the outer
object; a CLOSE marker inside a JSON string is text. Arguments written as a JSON string holding the
object (Granite 4's `"arguments": "{…}"`) wait for the string's end and come out decoded. A block
whose first character is no `{` (prose after OPEN) is not a call: its text goes back as content,
without OPEN.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..calls import PartialCall
from ..scan import JsonStrings

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class JsonBlockSpec:
    open: str
    close: str
    name_keys: tuple[str, ...] = ("name",)
    argument_keys: tuple[str, ...] = ("arguments", "parameters")

    def name_pattern(self) -> re.Pattern[str]:
        keys = "|".join(map(re.escape, self.name_keys))
        return re.compile(rf'"(?:{keys})"\s*:\s*"((?:[^"\\]|\\.)*)"')

    def arguments_pattern(self) -> re.Pattern[str]:
        keys = "|".join(map(re.escape, self.argument_keys))
        return re.compile(rf'"(?:{keys})"\s*:\s*')


def _holds_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


class JsonBlock:
    def __init__(self, spec: JsonBlockSpec) -> None:
        self.spec = spec
        self.calls: list[PartialCall] = []
        self.body = ""  # everything after OPEN, up to what has been scanned
        self.pending = ""  # text not scanned yet (could begin CLOSE)
        self.strings = JsonStrings()
        self.name: str | None = None
        self.arguments_at: int | None = None
        self.stray = ""  # raw text that is no call, shown as content
        self.head = ""  # whitespace after OPEN, until the first character says whether a call follows
        self.started = False
        self._name_re = spec.name_pattern()
        self._arguments_re = spec.arguments_pattern()

    def _locate(self) -> None:
        if self.name is None and (m := self._name_re.search(self.body)):
            self.name = json.loads(f'"{m.group(1)}"')
        found = self._arguments_re.search(self.body) if self.arguments_at is None else None
        if found and found.end() < len(self.body):  # whitespace after the colon may still grow
            self.arguments_at = found.end()
        if self.name is not None and not self.calls:
            self.calls.append(PartialCall(name=self.name))

    def _stream_arguments(self) -> None:
        """Show the arguments written so far, minus a tail of `}` and whitespace that may close the object."""
        if not self.calls or self.arguments_at is None:
            return
        call, body = self.calls[0], self.body
        if body.startswith('"', self.arguments_at):  # a JSON string: shown once decoded, at the end
            return
        shown = self.arguments_at + len(call.arguments)
        end = len(body)
        while end > shown and body[end - 1] in " \t\r\n}":
            end -= 1
        if end > shown:
            call.arguments += body[shown:end]

    def _final_arguments(self) -> str:
        assert self.arguments_at is not None
        try:
            value, end = _DECODER.raw_decode(self.body, self.arguments_at)
            if isinstance(value, str) and _holds_object(value):
                return value.strip()
            return self.body[self.arguments_at : end]
        except ValueError:
            raw = self.body[self.arguments_at :].rstrip()
            return raw[:-1].rstrip() if raw.endswith("}") and raw.count("{") < raw.count("}") else raw

    def _complete(self, closed: bool) -> None:
        """Settle the call at the end of the block; a block with no call name becomes content."""
        self._locate()
        if not self.calls:
            if self.body.strip():
                self.stray = self.spec.open + self.body + (self.spec.close if closed else "")
            return
        call = self.calls[0]
        final = self._final_arguments() if self.arguments_at is not None else "{}"
        if final.startswith(call.arguments):
            call.arguments = final

    def _start(self, text: str) -> tuple[bool, str | None]:
        """Decide from the first non-space character whether a call follows OPEN: (decided, leftover)."""
        self.head += text
        first = self.head.lstrip()
        close = self.spec.close
        if not first or (len(first) < len(close) and close.startswith(first)):
            return False, None
        self.started, head, self.head = True, self.head, ""
        if first.startswith(close):  # an empty block
            return True, first[len(close) :]
        if not first.startswith("{"):  # prose after OPEN: not a call, the text is content
            return True, head
        self.pending = head
        return True, None

    def feed(self, text: str) -> str | None:
        if not self.started:
            decided, leftover = self._start(text)
            if not decided or leftover is not None:
                return leftover
            text = ""
        self.pending += text
        at, marker = self.strings.find_outside(self.pending, (self.spec.close,))
        self.body += self.pending[:at]
        self.pending = self.pending[at:]
        if marker is None:
            self._locate()
            self._stream_arguments()
            return None
        self._complete(closed=True)
        leftover, self.pending = self.pending[len(marker) :], ""
        return leftover

    def finish(self) -> None:
        if not self.started:
            self.stray, self.head = self.head.strip() and self.head, ""
            return
        self.body += self.pending
        self.pending = ""
        self._complete(closed=False)
