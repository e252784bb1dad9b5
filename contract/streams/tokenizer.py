"""A per-family tokenizer, and token streams of rendered samples.

Two tiers (`--vocabulary`), a property of the family a run hands out (`Family.in_tier`), so nothing here
holds a setting. `real` (the default): a family with a real vocabulary
(`Family.vocabulary`, see `contract.streams.vocabulary`) is tokenized as its model's tokenizer tokenizes
the text, so a sample's ids equal `tokenizer.encode(text)`, except that a payload span quoting a
marker is ordinary tokens (the model writes it so), split as the tokenizer's model splits that
span. Families without one, and every family in the `synthetic` tier, use a byte-level BPE
trained on a small fixed English/JSON corpus (so CJK, emoji and RTL text split into byte tokens
and incremental detokenization yields empty deltas mid-character), with the family's single-token
markers added: special ones as special tokens, the rest as added tokens with `special=False` (and its
template's turn tokens, `Family.prompt_tokens`, as special tokens after them).
There, payload text (narration, reasoning, arguments) is encoded with the BPE model alone, so a
marker quoted inside an argument becomes ordinary tokens, as a model emits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from tokenizers.decoders import DecodeStream

from ..cases.family import SYNTHETIC, Family
from ..cases.rendering import Kind, Rendered
from . import stream_cache
from .vocabulary import load


def vocabulary_label(family: Family) -> str:
    """What a family's cells are graded on in its tier: `real:<package>@<version>` or `synthetic`."""
    return family.graded_vocabulary.label if family.graded_vocabulary else SYNTHETIC


_CORPUS = (
    "The quick brown fox jumps over the lazy dog. I should call the weather tool for Paris, then answer.\n"
    "Let me look that up for you. It will be sunny tomorrow; the forecast says 21 degrees.\n"
    '{"city": "Paris", "days": 3} {"tz": "UTC"} {"query": "search terms", "filters": {}}\n'
    "function arguments parameter name value true false null [1, 2, 3] {} () <> </> = : ; , .\n"
    "Reasoning about the user's request: they want the time in Tokyo and the weather in Paris.\n"
)
VOCAB_SIZE = 1200


def family_tokenizer(family: Family) -> Tokenizer:
    """The family's tokenizer in its tier."""
    if family.graded_vocabulary:
        return load(family.graded_vocabulary)
    return synthetic_tokenizer(family.in_tier(SYNTHETIC))


@cache
def synthetic_tokenizer(family: Family) -> Tokenizer:
    """Deterministic: the same family gives the same vocabulary in every process (trained once per family:
    both tiers ask for it through the synthetic one)."""
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
    # the template's turn tokens last, so that adding them leaves every output's ids as they were
    prompt_only = [t for t in family.prompt_tokens if t not in family.markers]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in prompt_only])
    return tokenizer


def encode_markup(tokenizer: Tokenizer, text: str) -> list[int]:
    """Markup may contain single-token markers."""
    return tokenizer.encode(text, add_special_tokens=False).ids


def encode_payload(tokenizer: Tokenizer, text: str) -> list[int]:
    """Payload never produces a marker token, even when it quotes a marker's text."""
    if tokenizer.normalizer is not None:
        text = tokenizer.normalizer.normalize_str(text)
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(text) if tokenizer.pre_tokenizer else [(text, None)]
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


def _real_runs(rendered: Rendered, markers: tuple[str, ...]) -> list[tuple[bool, str]]:
    """The text as (quoting, text) runs: a payload span that spells a marker is quoting (a model writes it
    as ordinary tokens, split as the tokenizer's model splits the whole span); everything else, markup
    and payload alike, runs together as the tokenizer sees it."""
    runs: list[tuple[bool, str]] = []
    for markup, text in _groups(rendered):
        quoting = not markup and any(marker in text for marker in markers)
        if not quoting and runs and not runs[-1][0]:
            runs[-1] = (False, runs[-1][1] + text)
        else:
            runs.append((quoting, text))
    return runs


def family_stream(family: Family, rendered: Rendered) -> TokenStream:
    """A sample's token stream on the family's tokenizer of its tier (stored once on disk:
    `contract.streams.stream_cache`)."""
    real = vocabulary_label(family) != SYNTHETIC
    markers = (*family.special_tokens, *family.added_tokens) if real else None
    runs = _real_runs(rendered, markers) if markers is not None else _groups(rendered)
    digest = stream_cache.key(_identity(family), markers, runs)
    ids, pieces = stream_cache.cached(digest, lambda: _ids_and_pieces(token_stream(family_tokenizer(family), rendered,
                                                                                     markers)))
    return TokenStream(ids, pieces)


def family_tokenizer_file(family: Family) -> Path:
    """The family's tokenizer of its tier as a `tokenizer.json`, for engines that load it from a file:
    saved once, beside the vocabularies (`contract.streams.stream_cache`), so no process loads a vocabulary to write it."""
    return stream_cache.saved(stream_cache.key(_identity(family), None, []), "tokenizers",
                              lambda: family_tokenizer(family).to_str())


def _identity(family: Family) -> object:
    """What the family's tokenizer of its tier is made from."""
    vocabulary = family.graded_vocabulary
    if vocabulary:
        return [vocabulary.label, vocabulary.package.sha256, vocabulary.renamed, vocabulary.extra_special]
    return [SYNTHETIC, _CORPUS, VOCAB_SIZE, family.corpus, family.special_tokens, family.added_tokens,
            family.prompt_tokens]


def _ids_and_pieces(stream: TokenStream) -> tuple[tuple[int, ...], tuple[str, ...]]:
    return stream.ids, stream.pieces


def token_stream(tokenizer: Tokenizer, rendered: Rendered, markers: tuple[str, ...] | None = None) -> TokenStream:
    """With `markers` (a real vocabulary's single-token markers), the text is encoded as the model's
    tokenizer encodes it, except that a marker quoted in payload is ordinary tokens; without, markup
    and payload spans are encoded apart, as the synthetic tier always has."""
    ids: list[int] = []
    if markers is not None:
        for quoting, text in _real_runs(rendered, markers):
            ids += encode_payload(tokenizer, text) if quoting else encode_markup(tokenizer, text)
    else:
        for markup, text in _groups(rendered):
            ids += encode_markup(tokenizer, text) if markup else encode_payload(tokenizer, text)
    decoder = DecodeStream(skip_special_tokens=False)
    pieces = tuple(decoder.step(tokenizer, i) or "" for i in ids)
    stream = TokenStream(tuple(ids), pieces)
    if stream.text != rendered.text:
        raise ValueError(f"tokenization does not round-trip: {stream.text!r} != {rendered.text!r}")
    return stream
