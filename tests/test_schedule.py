"""Which group a free worker takes: its own contiguous run first, then the far end of the longest run left."""

from __future__ import annotations

from contract.grading.schedule import Schedule


def _drain(schedule: Schedule, order: list[int]) -> list[tuple[int, int]]:
    """(worker, group) as the workers in `order` ask, until nothing is left."""
    taken = []
    for worker in order * 100:
        group = schedule.take(worker)
        if group is None:
            break
        taken.append((worker, group))
    return taken


def test_each_worker_takes_the_front_of_its_own_run() -> None:
    schedule = Schedule.split(10, 2)
    assert [schedule.take(0), schedule.take(1), schedule.take(0), schedule.take(1)] == [0, 5, 1, 6]


def test_every_group_is_taken_once_whatever_the_workers_pace() -> None:
    for count, workers, order in [(10, 2, [0, 1]), (7, 3, [0, 0, 1, 2]), (3, 4, [3, 2, 1, 0]), (0, 2, [0])]:
        taken = _drain(Schedule.split(count, workers), order)
        assert sorted(group for _, group in taken) == list(range(count))


def test_a_worker_done_with_its_run_takes_the_back_of_the_longest_other() -> None:
    schedule = Schedule.split(12, 3)  # runs 0-3, 4-7, 8-11
    assert [schedule.take(0) for _ in range(4)] == [0, 1, 2, 3]
    schedule.take(2)  # run 2 now 9-11, run 1 still 4-7: the longest
    assert schedule.take(0) == 7
    assert schedule.take(1) == 4  # its owner still starts at its front


def test_a_group_the_grade_waits_for_goes_first_in_its_own_run() -> None:
    schedule = Schedule.split(10, 2)
    schedule.hurry(8)
    assert schedule.take(0) == 0  # not the other run's worker
    assert schedule.take(1) == 8
    assert schedule.take(1) == 5


def test_an_unplanned_group_goes_to_the_next_free_worker() -> None:
    schedule = Schedule.split(4, 2)
    schedule.hurry(4)  # graded though not planned
    assert schedule.take(1) == 4
    assert schedule.take(1) == 2
