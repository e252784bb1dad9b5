"""The concurrent mode's schedule: every step of both requests once, in order, each finish after its last chunk,
and the partner's steps spread across the whole of the case's."""

from __future__ import annotations

import pytest

from contract.streams.interleave import CASE, PARTNER, Step, schedule


@pytest.mark.parametrize(("case_steps", "partner_steps"), [(1, 1), (7, 3), (3, 7), (40, 9), (5, 0), (0, 4), (0, 0)])
def test_every_step_once_in_order_then_its_finish(case_steps: int, partner_steps: int) -> None:
    order = schedule(case_steps, partner_steps)
    for stream, count in ((CASE, case_steps), (PARTNER, partner_steps)):
        mine = [step.index for step in order if step.stream == stream]
        assert mine == [*range(count), None]


def test_partner_steps_spread_over_the_case() -> None:
    """With a case four times as long, the partner's chunks come one every four of the case's, not all first."""
    order = schedule(40, 10)
    case_positions = [i for i, s in enumerate(order) if s.stream == CASE and s.index is not None]
    partner_positions = [i for i, s in enumerate(order) if s.stream == PARTNER and s.index is not None]
    assert partner_positions[0] < case_positions[4] and partner_positions[-1] > case_positions[-5]
    between = [sum(1 for c in case_positions if a < c < b) for a, b in zip(partner_positions, partner_positions[1:], strict=False)]
    assert set(between) == {4}


def test_the_case_goes_first_on_a_tie() -> None:
    assert schedule(2, 2)[:2] == (Step(CASE, 0), Step(PARTNER, 0))
