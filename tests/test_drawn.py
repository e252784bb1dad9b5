"""The stored draws (`fixtures/drawn_chunkings.jsonl`) are what hypothesis draws, and replaying them gives a
cell the verdict a live search gives: the same first failing chunking, the same failure."""

from __future__ import annotations

import pytest

from contract.cases.catalog import case
from contract.cases.family import REAL, SYNTHETIC, TIERS, Sample
from contract.grading.subject import Subject, _grade_searched, grade
from contract.streams import drawn
from contract.streams.chunking import mode
from contract.streams.profiles import CI, profile
from contract.streams.tokenizer import family_stream
from fixtures import all_families, family
from tests.miniatures import load as miniatures
from tests.miniatures.defects import DEFECTS


def test_the_store_holds_every_draw_and_nothing_else() -> None:
    """Adding a case or changing a family's rendering leaves the store behind: `python -m contract.cli.draws
    --update` brings it up to date (until then those cells are drawn live, slower but alike)."""
    missing, unused = drawn.stale(drawn.every_draw(all_families().values(), TIERS), profile(CI))
    assert not missing and not unused, (f"{len(missing)} draws missing ({', '.join(d.key for d in missing[:3])}), "
                                        f"{unused} unused: run `python -m contract.cli.draws --update`")


# a spread of inputs: token and char tier, both vocabulary tiers, a short sample and a 16 KiB one
SPREAD = [("hermes", "tool.single", "random", REAL), ("hermes", "tool.single", "chars", REAL),
          ("kimi_k2", "tool.native_id", "random", SYNTHETIC), ("gemma4", "reasoning.then_tool", "random", REAL),
          ("gemma4", "reasoning.then_tool", "random", SYNTHETIC), ("qwen3_coder", "tool.long_args", "chars", REAL),
          ("harmony", "harmony.channels", "random", REAL), ("pythonic", "tool.parallel", "chars", SYNTHETIC)]


@pytest.mark.parametrize(("name", "case_id", "mode_name", "tier"), SPREAD)
def test_a_stored_draw_is_what_hypothesis_draws(name: str, case_id: str, mode_name: str, tier: str) -> None:
    fam = family(name).in_tier(tier)
    sample = fam.sample(case(case_id))
    assert isinstance(sample, Sample)
    draw = drawn.draw_of(name, case_id, mode(mode_name), sample.text, family_stream(fam, sample.rendered),
                         fam.markers)
    stored = drawn._stored().get(f"{draw.key}@{draw.fingerprint(profile(CI))}")
    assert stored is not None, f"{draw.key} is not stored"
    assert stored[1] == drawn.draw_live(draw, profile(CI))


# miniatures that fail some generated chunkings and pass others
FAILING = [("rewrites_native_ids", "tool.native_id", "random"), ("rewrites_native_ids", "tool.native_id", "chars"),
           ("leaks_split_marker", "tool.single", "chars"), ("drops_trailing_text", "tool.content_after", "random"),
           ("duplicates_text", "reasoning.then_content_and_tool", "random"),
           ("leaks_split_marker", "reasoning.only", "random")]


@pytest.mark.parametrize(("parser", "case_id", "mode_name"), FAILING)
def test_replaying_the_draws_reports_what_a_live_search_reports(parser: str, case_id: str, mode_name: str) -> None:
    engine = miniatures()
    defect_family = family(DEFECTS[parser].family)
    sample = defect_family.sample(case(case_id))
    assert isinstance(sample, Sample)
    stream = family_stream(defect_family, sample.rendered)

    def subject() -> Subject:
        return Subject(engine.factories[parser](defect_family), defect_family, sample, stream)

    replayed = grade(subject(), mode(mode_name), profile(CI))
    searched = _grade_searched(subject(), mode(mode_name), profile(CI), incremental=True)
    assert (replayed.status, replayed.failures, replayed.chunking, replayed.observed, replayed.withheld) == (
        searched.status, searched.failures, searched.chunking, searched.observed, searched.withheld)
    assert replayed.examples == searched.examples - (replayed.status != "pass")  # the search replays a failure once
