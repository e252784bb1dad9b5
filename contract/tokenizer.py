"""A per-family tokenizer built offline with `tokenizers`, and token streams of rendered samples.

Byte-level BPE trained on a small fixed English/JSON corpus (so CJK, emoji and RTL text split
into byte tokens and incremental detokenization yields empty deltas mid-character), with the
family's single-token markers added: special ones as special tokens, the rest as added tokens
with `special=False`. Payload text (narration, reasoning, arguments) is encoded with the BPE
model alone, so a marker quoted inside an argument becomes ordinary tokens, as a model emits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from tokenizers.decoders import DecodeStream

from .family import Family
from .rendering import Kind, Rendered

_CORPUS = (
    "The quick brown fox jumps over the lazy dog. I should call the weather tool for Paris, then answer.\n"
    "Let me look that up for you. It will be sunny tomorrow; the forecast says 21 degrees.\n"
    '{"city": "Paris", "days": 3} {"tz": "UTC"} {"query": "search terms", "filters": {}}\n'
    "function arguments parameter name value true false null [1, 2, 3] {} () <> </> = : ; , .\n"
    "Reasoning about the user's request: they want the time in Tokyo and the weather in Paris.\n"
)
VOCAB_SIZE = 1200


@cache
def family_tokenizer(family: Family) -> Tokenizer:
    """Deterministic: the same family gives the same vocabulary in every process (xdist workers)."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([_CORPUS * 4, family.corpus], trainer)
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in family.special_tokens])
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in family.added_tokens])
    return tokenizer


def encode_markup(tokenizer: Tokenizer, text: str) -> list[int]:
    """Markup may contain single-token markers."""
    return tokenizer.encode(text, add_special_tokens=False).ids


def encode_payload(tokenizer: Tokenizer, text: str) -> list[int]:
    """Payload never produces a marker token, even when it quotes a marker's text."""
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(text)
    return [token.id for piece, _ in pieces for token in tokenizer.model.tokenize(piece)]


@dataclass(frozen=True)
class TokenStream:
    """A sample's text as token ids plus the text each id adds under incremental detokenization."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]  # "" where a token ends inside a UTF-8 character

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def offsets(self) -> list[int]:
        """Character offset of every token boundary, 0 and len(text) included."""
        out = [0]
        for piece in self.pieces:
            out.append(out[-1] + len(piece))
        return out


def _groups(rendered: Rendered) -> list[tuple[bool, str]]:
    """Consecutive spans of the same class (markup or payload), as (is_markup, text)."""
    groups: list[tuple[bool, str]] = []
    for span in rendered.spans:
        markup = span.kind is Kind.MARKUP
        text = rendered.text[span.start : span.end]
        if groups and groups[-1][0] == markup:
            groups[-1] = (markup, groups[-1][1] + text)
        else:
            groups.append((markup, text))
    return groups


def token_stream(tokenizer: Tokenizer, rendered: Rendered) -> TokenStream:
    ids: list[int] = []
    for markup, text in _groups(rendered):
        ids += encode_markup(tokenizer, text) if markup else encode_payload(tokenizer, text)
    decoder = DecodeStream(skip_special_tokens=False)
    pieces = tuple(decoder.step(tokenizer, i) or "" for i in ids)
    stream = TokenStream(tuple(ids), pieces)
    if stream.text != rendered.text:
        raise ValueError(f"tokenization does not round-trip: {stream.text!r} != {rendered.text!r}")
    return stream
