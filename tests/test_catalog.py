"""The case catalog, the families' positions on it, and expected results derived from scenarios."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from contract.cases.catalog import CASES, CATALOG, PLACEHOLDERS, Call, Case, Content, Reasoning, case
from contract.cases.expected import ANY_ARGUMENTS, ExpectedMessage
from contract.cases.family import Family, NotApplicable, Render, Sample, Unimplemented
from contract.cases.rendering import Kind, TextBuilder
from contract.cli import catalog_doc
from fixtures import all_families, family

CASES_MD = Path(__file__).resolve().parents[2] / "shared" / "CASES.md"
KINDS = ("tool", "reasoning", "harmony")
FAMILIES = sorted(all_families())


def _samples(case_id: str) -> list[Sample]:
    """Every family's Sample of one case (NotApplicable positions left out)."""
    found = [f.sample(case(case_id)) for f in all_families().values()]
    samples = [s for s in found if isinstance(s, Sample)]
    assert samples, f"no family renders {case_id}"
    return samples


def _all_samples() -> list[Sample]:
    return [s for c in CATALOG for f in all_families().values() if isinstance(s := f.sample(c), Sample)]


def _markdown_ids(text: str) -> set[str]:
    """The id column of every table: rows whose first cell is a backquoted dotted id."""
    return set(re.findall(r"^\|\s*`([a-z0-9_]+\.[a-z0-9_]+)`\s*\|", text, flags=re.MULTILINE))


def test_ids_unique_and_prefixed_by_kind() -> None:
    ids = [c.id for c in CATALOG]
    assert len(ids) == len(set(ids))
    for c in CATALOG:
        assert c.kind in KINDS
        assert c.id.startswith(c.kind + "."), c.id


def test_case_rejects_kind_not_matching_id() -> None:
    single = case("tool.single")
    with pytest.raises(ValueError, match="does not match"):
        Case("reasoning.single", "tool", single.title, single.scenario, single.expected, single.origin)


def test_every_cases_md_id_is_in_the_catalog() -> None:
    if not CASES_MD.exists():
        pytest.skip(f"{CASES_MD} not found: the shared spec sits beside the repository only in the workspace")
    documented = _markdown_ids(CASES_MD.read_text(encoding="utf-8"))
    assert len(documented) >= 30, "the CASES.md table parser found too few ids"
    assert documented - set(CASES) == set()


def test_catalog_doc_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/CATALOG.md is generated from the catalog and the families' positions: regenerate it with
    `python -m contract.cli.catalog_doc` after changing either."""
    assert catalog_doc.main(["--check"]) == 0, capsys.readouterr().err
    documented = _markdown_ids(catalog_doc.DOC.read_text(encoding="utf-8"))
    assert documented == set(CASES)


@pytest.mark.parametrize("name", FAMILIES)
def test_family_takes_a_position_on_every_case(name: str) -> None:
    fam = family(name)
    for c in CATALOG:
        assert not isinstance(fam.position(c), Unimplemented), c.id
        assert isinstance(fam.sample(c), Sample | NotApplicable), c.id


def _family_without(missing: str) -> Family:
    base = family("kimi_k2")
    positions = {k: v for k, v in base.positions.items() if k != missing}
    return dataclasses.replace(base, positions=positions)


def test_missing_position_is_unimplemented() -> None:
    fam = _family_without("tool.parallel")
    result = fam.sample(case("tool.parallel"))
    assert isinstance(result, Unimplemented)
    assert (result.family, result.case) == ("kimi_k2", "tool.parallel")
    assert isinstance(fam.sample(case("tool.single")), Sample)


def _no_op(scenario: object, out: TextBuilder) -> None:
    """A renderer for families built only to be rejected."""


def test_family_rejects_position_for_unknown_case() -> None:
    with pytest.raises(ValueError, match="a position for case .tool.nonexistent., which is not in the catalog"):
        Family("x", "X", ("<a>",), (), _no_op, {"tool.nonexistent": Render()}, "<a>")


@pytest.mark.parametrize(
    "reason",
    [
        "",
        "   ",
        "n/a",
        "TODO",
        "tbd.",
        "TODO: write the reason",
    ],
)
def test_not_applicable_rejects_placeholder_reason(reason: str) -> None:
    with pytest.raises(ValueError):
        NotApplicable(reason)


def test_not_applicable_keeps_an_honest_reason() -> None:
    reason = "Hermes has no native ids; servers mint them"
    assert NotApplicable(reason).reason == reason


def _call_tuples(outcome: ExpectedMessage) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in outcome.tool_calls]


def test_parallel_expects_both_calls_in_order() -> None:
    calls = case("tool.parallel").scenario.calls
    assert len(calls) == 2 and calls[0].name != calls[1].name
    for s in _samples("tool.parallel"):
        assert _call_tuples(s.expected.preferred) == [(c.name, c.arguments) for c in calls], s.family
        assert s.expected.preferred.finish_reason == "tool_calls"


def test_content_after_expects_the_trailing_narration() -> None:
    segments = case("tool.content_after").scenario.segments
    assert isinstance(segments[0], Call) and isinstance(segments[-1], Content)
    for s in _samples("tool.content_after"):
        assert s.expected.preferred.content == segments[-1].text, s.family
        assert len(s.expected.preferred.tool_calls) == 1


def test_unterminated_reasoning_expects_length() -> None:
    (reasoning,) = case("reasoning.unterminated").scenario.segments
    assert isinstance(reasoning, Reasoning)
    for s in _samples("reasoning.unterminated"):
        (outcome,) = s.expected.outcomes
        observed = (outcome.finish_reason, outcome.reasoning, outcome.content)
        assert observed == ("length", reasoning.text, ""), s.family
        assert s.stop == "length"


def _full_last_arguments(s: Sample) -> str:
    """The last call's argument text as the family renders it without truncation."""
    builder = TextBuilder()
    family(s.family).renderer(s.scenario, builder)
    return builder.build().pieces(Kind.ARGUMENTS)[-1]


def test_truncated_args_offers_call_and_fragment_outcomes() -> None:
    first, last = case("tool.truncated_args").scenario.calls
    for s in _samples("tool.truncated_args"):
        as_call, as_content = s.expected.outcomes
        assert [(c.name, c.arguments) for c in as_call.tool_calls] == [(first.name, first.arguments),
                                                                        (last.name, ANY_ARGUMENTS)]
        assert _call_tuples(as_content) == [(first.name, first.arguments)]
        fragment = as_content.content
        full = _full_last_arguments(s)
        assert fragment and len(fragment) < len(full) and full.startswith(fragment), s.family
        assert s.text.endswith(fragment)
        assert {as_call.finish_reason, as_content.finish_reason} == {"length"}


def _placeholder_cases() -> list[str]:
    tokens = ["{" + p + "}" for p in PLACEHOLDERS]
    return [c.id for c in CATALOG if any(t in repr(c.scenario) for t in tokens)]


def test_placeholders_are_used_by_the_catalog() -> None:
    text = " ".join(repr(case(i).scenario) for i in _placeholder_cases())
    for placeholder in PLACEHOLDERS:
        assert "{" + placeholder + "}" in text


def test_placeholders_never_survive_into_samples() -> None:
    leftovers = re.compile("|".join(re.escape("{" + p + "}") for p in PLACEHOLDERS))
    samples = _all_samples()
    assert {s.case.id for s in samples} >= set(_placeholder_cases())
    for s in samples:
        shown = [s.text, s.context.prompt_tail, json.dumps(s.expected.to_json(), ensure_ascii=False)]
        assert not any(leftovers.search(t) for t in shown), (s.family, s.case.id)


def test_readme_families_table_counts_the_samples() -> None:
    """README's families table says how many cases each family renders: keep it true as the catalog grows. The
    codec column names a codec, or `—` for a family with no tool format."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    header = re.search(r"^\| family \|.*\| Samples of (\d+) \|", readme, flags=re.MULTILINE)
    assert header and int(header.group(1)) == len(CATALOG)
    rows = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^\| (\w+) \| (?:[^|\\]|\\\|)+ \| [`—][^\n]*? \| (\d+) \| ", readme, flags=re.MULTILINE)}
    rendered = {name: sum(isinstance(f.position(c), Render) for c in CATALOG) for name, f in all_families().items()}
    assert rows == rendered
