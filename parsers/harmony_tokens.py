"""Streamed Harmony text as o200k_harmony token ids, each released once no later text can change it.

Shared by the adapters of token-id Harmony parsers (openai-harmony, vLLM); imports no engine.

openai-harmony parses token ids, so the text a case streams is encoded with the harmony encoding
itself. Which marker occurrences are special tokens is what the model emitted: in token tiers the
family tokenizer's ids say it (a family special-token id is a marker; any other id is ordinary text,
a marker quoted in an argument included), so literal markers stay ordinary tokens; in the char tier
(no ids, as a re-chunking proxy sees text) every marker text is taken for the special token.

Ordinary text is encoded up to the last position where o200k's pre-tokenizer must split whatever
follows (see `_split_before`): a special token, a space after a non-space, the end of a run of
letters or of digits. The rest waits for more text, so the ids fed equal the one-shot encoding;
`finish` checks that and raises if they ever differ.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from tokenizers.decoders import DecodeStream

from contract.cases.family import Family
from contract.cases.model import Chunk
from contract.streams.tokenizer import family_tokenizer


def _split_before(text: str, at: int) -> bool:
    """Does o200k's pre-tokenizer split `text` before `at`, whatever comes after `text`?

    Its pieces are letter runs (with one leading non-letter and an `'s`-style suffix), digit runs,
    punctuation runs and whitespace runs, matched left to right without lookbehind. After a letter,
    only letters, marks and `'` can extend a piece; after a digit only digits; a space never
    extends a piece that holds a non-space. A piece starting at `at` depends on nothing before it.
    """
    before, after = text[at - 1], text[at]
    if after == " " and not before.isspace():
        return True
    kind_before, kind_after = unicodedata.category(before)[0], unicodedata.category(after)[0]
    if kind_before == "L":
        return kind_after not in "LM" and after != "'"
    return kind_before == "N" and kind_after != "N"


def stable_length(text: str) -> int:
    """Length of the longest prefix of `text` whose encoding no continuation can change."""
    for at in range(len(text) - 1, 0, -1):
        if _split_before(text, at):
            return at
    return 0


class HarmonyTokens:
    """One output's text in, o200k_harmony ids out, in order, as soon as they are final."""

    def __init__(self, encoding: Any, family: Family) -> None:
        self.encoding = encoding
        self.tokenizer = family_tokenizer(family)
        self.markers = {self.tokenizer.token_to_id(m): m for m in family.special_tokens}
        self.special = {m: self._special_id(m) for m in family.special_tokens}
        self.marker_pattern = re.compile("|".join(re.escape(m) for m in family.special_tokens))
        self.decoder = DecodeStream(skip_special_tokens=False)
        self.pending = ""  # ordinary text not encoded yet
        self.undecided = ""  # char tier: a text tail that may still become a marker
        self.pieces: list[tuple[str, bool]] = []  # all text seen, as (text, is special token)
        self.fed: list[int] = []

    def _special_id(self, marker: str) -> int:
        ids = self.encoding.encode(marker, allowed_special={marker})
        if len(ids) != 1:
            raise ValueError(f"{marker!r} is not a single o200k_harmony special token: {ids}")
        return ids[0]

    def _ordinary(self, text: str) -> list[int]:
        return self.encoding.encode(text, disallowed_special=()) if text else []

    def _from_ids(self, chunk: Chunk) -> list[tuple[str, bool]]:
        assert chunk.token_ids is not None
        out = [(self.decoder.step(self.tokenizer, i) or "", i in self.markers) for i in chunk.token_ids]
        if "".join(text for text, _ in out) != chunk.text:
            raise ValueError(f"chunk ids do not decode to its text: {chunk.text!r}")
        return out

    def _from_text(self, text: str) -> list[tuple[str, bool]]:
        text, out, at = self.undecided + text, [], 0
        for found in self.marker_pattern.finditer(text):
            out += [(text[at : found.start()], False), (found.group(), True)]
            at = found.end()
        rest = text[at:]
        keep = max((n for m in self.special for n in range(1, len(m)) if rest.endswith(m[:n])), default=0)
        self.undecided = rest[len(rest) - keep :]
        return [*out, (rest[: len(rest) - keep], False)]

    def push(self, chunk: Chunk) -> list[int]:
        """The ids this chunk makes final."""
        ids: list[int] = []
        for text, special in self._from_ids(chunk) if chunk.token_ids is not None else self._from_text(chunk.text):
            if not text:
                continue
            self.pieces.append((text, special))
            if special:
                ids += [*self._ordinary(self.pending), self.special[text]]
                self.pending = ""
            else:
                self.pending += text
        cut = stable_length(self.pending)
        ids += self._ordinary(self.pending[:cut])
        self.pending = self.pending[cut:]
        self.fed += ids
        return ids

    def finish(self) -> list[int]:
        """The remaining ids; checks that the ids fed equal the encoding of the whole text at once."""
        if self.undecided:
            self.pieces.append((self.undecided, False))
        ids = self._ordinary(self.pending + self.undecided)
        self.pending = self.undecided = ""
        self.fed += ids
        if self.fed != self.whole():
            raise RuntimeError("adapter: the ids fed while streaming differ from the one-shot encoding")
        return ids

    def whole(self) -> list[int]:
        """The one-shot encoding of every piece seen: special tokens, and each text run between them."""
        ids: list[int] = []
        run = ""
        for text, special in self.pieces:
            if special:
                ids += [*self._ordinary(run), self.special[text]]
                run = ""
            else:
                run += text
        return ids + self._ordinary(run)
