"""One raw-text argument value, typed by the declared schema, written into a call's JSON arguments.

Formats that write values as raw text (GLM's `<arg_value>`, XML parameters) share this: a string
value streams character by character as a JSON string; any other type is written once the value
is complete. A value that could still turn out to be `null` is held back while it is that short.
"""

from __future__ import annotations

import json

from ..calls import PartialCall
from ..values import convert, streams_as_string


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class RawValue:
    def __init__(self, call: PartialCall, kind: str | None) -> None:
        self.call = call
        self.kind = kind  # the declared type; None when the tool or key is undeclared
        self.text = ""
        self.open = False  # the JSON string's opening quote has been written
        self.written = 0  # characters of `text` already written

    def grow(self, text: str) -> None:
        """More of the value, certain not to belong to a marker; stream it when the value is a string."""
        self.text += text
        if not streams_as_string(self.kind):
            return
        if not self.open and len(self.text) <= 6 and "null".startswith(self.text.strip().lower()):
            return
        if not self.open:
            self.call.arguments += '"'
            self.open = True
        self.call.arguments += _escaped(self.text[self.written :])
        self.written = len(self.text)

    def close(self) -> None:
        """The value ended (or the stream did): write what is left, typed by the schema."""
        if self.open:
            self.call.arguments += _escaped(self.text[self.written :]) + '"'
        else:
            self.call.arguments += json.dumps(convert(self.text, self.kind), ensure_ascii=False)
        self.written = len(self.text)
