"""``auto`` never takes B for more than it ever saw run at once.

Over real HTTP a backlogged client reads the first tokens of two short batches bunched, and the
detector's waves chain them into one: B = 9-13 in a third of the runs on a B=8 server (a
burst of 160), and ``auto`` then sent that many a batch, the rest left over to run alone.
Such a B is a lower bound: explored, a full batch shows.
"""

from __future__ import annotations

from fairstream import Auto, BatchingReport
from fairstream._dispatch._job import Job
from fairstream._dispatch.policies.auto._verdict import static_size

STEP = 0.010


def _eight_ran_at_once() -> Auto:
    auto = Auto()
    jobs = [Job(expected_tokens=40, enqueued=0.0) for _ in range(8)]
    for job in jobs:
        auto.on_send(job, 1.0)
    for job in jobs:
        auto.on_first_token(job, 1.0 + 3 * STEP)
    assert auto.peak == 8
    return auto


def _static(size: int, exact: bool) -> BatchingReport:
    return BatchingReport("static", 0.9, batch_size=size, batch_size_exact=exact)


def test_an_exact_b_above_what_ever_ran_at_once_is_a_lower_bound_at_that() -> None:
    auto = _eight_ran_at_once()
    assert static_size(_static(12, True), auto.situation) == (8, False)


def test_an_exact_b_within_it_stays_exact() -> None:
    auto = _eight_ran_at_once()
    assert static_size(_static(8, True), auto.situation) == (8, True)
    assert static_size(_static(6, True), auto.situation) == (6, True)


def test_a_lower_bound_is_left_to_exploring() -> None:
    auto = _eight_ran_at_once()
    assert static_size(_static(12, False), auto.situation) == (12, False)
