"""The per-family tokenizer in the tier the run grades (real vocabularies by default): faithful round
trips, single-token markers in markup only, determinism."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from contract.cases.catalog import CATALOG, case
from contract.cases.family import TIERS, Family, Sample
from contract.cases.rendering import Kind, Rendered
from contract.streams.tokenizer import encode_markup, family_stream, family_tokenizer, family_tokenizer_file
from fixtures import all_families, family

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = [s for c in CATALOG for f in all_families().values() if isinstance(s := f.sample(c), Sample)]
HASH_SCRIPT = (
    "import hashlib\n"
    "from contract.streams.tokenizer import family_tokenizer\n"
    "from fixtures import all_families\n"
    "for name, f in sorted(all_families().items()):\n"
    "    print(name, hashlib.sha256(family_tokenizer(f).to_str().encode()).hexdigest())\n"
)


def _id(s: Sample) -> str:
    return f"{s.family}-{s.case.id}"


def _single_tokens(f: Family) -> tuple[str, ...]:
    return (*f.special_tokens, *f.added_tokens)


def _markup_only(rendered: Rendered) -> str:
    """The text with every non-markup character blanked out, so markers are found in markup alone."""
    chars = ["\0"] * len(rendered.text)
    for span in rendered.spans:
        if span.kind is Kind.MARKUP:
            chars[span.start : span.end] = rendered.text[span.start : span.end]
    return "".join(chars)


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_token_stream_round_trips(sample: Sample) -> None:
    stream = family_stream(family(sample.family), sample.rendered)
    assert "".join(stream.pieces) == sample.text
    assert len(stream.ids) == len(stream.pieces)


@pytest.mark.parametrize("name", sorted(all_families()))
def test_each_single_token_marker_encodes_to_one_id(name: str) -> None:
    f = family(name)
    tokenizer = family_tokenizer(f)
    ids = [tokenizer.encode(m, add_special_tokens=False).ids for m in _single_tokens(f)]
    assert all(len(i) == 1 for i in ids)
    assert len({i[0] for i in ids}) == len(ids)


@pytest.mark.parametrize("name", sorted(n for n, f in all_families().items() if f.prompt_tokens))
@pytest.mark.parametrize("tier", TIERS)
def test_each_prompt_token_encodes_to_one_id_in_either_tier(name: str, tier: str) -> None:
    """A template's turn tokens are single ids wherever the prompt is encoded, so a parser that stops its look
    back at one (vLLM's turn boundaries) finds it; and the prompt's history holds them as the template writes it."""
    f = family(name).in_tier(tier)
    for tokenizer in (family_tokenizer(f), Tokenizer.from_file(str(family_tokenizer_file(f)))):  # engines load the file
        ids = [encode_markup(tokenizer, t) for t in f.prompt_tokens]
        assert [len(i) for i in ids] == [1] * len(ids), f.prompt_tokens
    assert all(t in f.earlier_turns() for t in f.prompt_tokens if f.history is not None)


@pytest.mark.parametrize("sample", SAMPLES, ids=_id)
def test_marker_ids_come_from_markup_only(sample: Sample) -> None:
    """Each marker occurrence in markup is exactly one id; occurrences in payload are none."""
    f = family(sample.family)
    tokenizer = family_tokenizer(f)
    ids = family_stream(f, sample.rendered).ids
    markup = _markup_only(sample.rendered)
    for marker in _single_tokens(f):
        assert ids.count(tokenizer.token_to_id(marker)) == markup.count(marker), marker


@pytest.mark.parametrize("name", ["kimi_k2", "hermes"])
def test_marker_in_args_is_not_the_marker_id(name: str) -> None:
    f = family(name)
    sample = f.sample(case("tool.marker_in_args"))
    assert isinstance(sample, Sample)
    tokenizer = family_tokenizer(f)
    ids = family_stream(f, sample.rendered).ids
    arguments = "".join(sample.rendered.pieces(Kind.ARGUMENTS))
    quoted = [m for m in _single_tokens(f) if m in arguments]
    assert quoted, "the sample quotes no marker in its arguments"
    for marker in quoted:
        assert ids.count(tokenizer.token_to_id(marker)) < sample.text.count(marker), marker


def test_multibyte_text_yields_empty_pieces() -> None:
    """A token that ends inside a UTF-8 character adds no text yet (incremental detokenization)."""
    multibyte = [s for s in SAMPLES if any(ord(ch) > 0x2E80 for ch in s.text)]
    assert multibyte
    assert any("" in family_stream(family(s.family), s.rendered).pieces for s in multibyte)


def test_vocabulary_identical_across_processes() -> None:
    """Another interpreter (another hash seed, another set order) builds the same tokenizer for every family."""
    run = subprocess.run([sys.executable, "-c", HASH_SCRIPT], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHONHASHSEED": "random"})  # a hang guard
    assert run.returncode == 0, run.stderr[-2000:]
    expected = "".join(
        f"{name} {hashlib.sha256(family_tokenizer(f).to_str().encode()).hexdigest()}\n"
        for name, f in sorted(all_families().items())
    )
    assert run.stdout == expected
