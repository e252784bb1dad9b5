"""An engine whose deltas cannot be attributed to chunks says so, and the matrix reports its holdback as not
measurable (a note, no figure) while grading correctness as usual; an ordinary engine gets a figure."""

from __future__ import annotations

import pytest
from grading_run import Run, grade

from tests.miniatures.coalescing import WHY

SELECTION = ("--case", "tool.content_before", "--case", "reasoning.only", "--mode", "batch", "--mode", "tokens",
             "--mode", "bursts-3", "--family", "hermes")


@pytest.fixture(scope="module")
def coalescing(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return grade(tmp_path_factory.mktemp("coalescing"), "--engine", "tests.miniatures.coalescing", *SELECTION)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return grade(tmp_path_factory.mktemp("reference"), "--engine", "reference", *SELECTION)


def test_holdback_is_not_measurable_where_the_engine_says_so(coalescing: Run) -> None:
    cells = coalescing.cells(parser="coalescing/at_the_end")
    assert len(cells) == 6 and {c.outcome for c in cells} == {"pass"}, [(c.case, c.mode, c.failures) for c in cells]
    for cell in cells:
        streaming = cell.mode != "batch"
        assert cell.holdback is None
        assert (f"holdback and incremental streaming not measurable: {WHY}" in cell.notes) is streaming


def test_an_engine_that_streams_per_chunk_gets_a_figure(reference: Run) -> None:
    streaming = [c for c in reference.cells(parser="reference/hermes") if c.mode != "batch"]
    assert len(streaming) == 4
    assert all(isinstance(c.holdback, int) for c in streaming)
    assert not any("not measurable" in note for c in streaming for note in c.notes)
