"""The decode step from chunk times a busy client read in bunches.

A 2-core client reading 16 streams at 100 tokens/s reads several chunks of a stream at once;
the plain median of the gaps between chunks then said 0.4-0.7 ms where the server stepped
every 13.5 ms, and the detector read holds and static batches everywhere.
"""

from __future__ import annotations

import statistics

import pytest

from fairstream._detect._view import Req, estimate_step


def _bunched(k: int, step: float, tokens: int, offset: float) -> Req:
    """A stream the server sent one token a ``step`` (from ``offset``), read ``k`` chunks
    at a time, 0.2 ms apart, as the last of each ``k`` arrived."""
    times = []
    for n in range(tokens):
        due = offset + (n // k * k + k - 1) * step  # the bunch's last token's time
        times.append(due + (n % k) * 0.0002)
    return Req(
        f"r{offset}", None, offset - step, times[0], times[-1], tokens, 16,
        tuple(times), tuple(1.0 for _ in times), times[-1],
    )  # fmt: skip


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_step_read_in_bunches_is_the_servers_step(k: int) -> None:
    step = 0.010
    reqs = [_bunched(k, step, 24 + i, i * 0.003) for i in range(8)]
    plain = statistics.median(
        (b - a) for r in reqs for a, b in zip(r.times, r.times[1:], strict=False) if b > a
    )
    if k >= 3:  # what the plain median said: under a millisecond
        assert plain < 0.001
    got = estimate_step(reqs)
    assert got is not None
    assert 0.8 * step <= got <= 1.25 * step


def test_chunks_read_as_they_come_keep_their_gaps() -> None:
    """Nothing bunched: every gap is a step, as before."""
    reqs = [_bunched(1, 0.010, 20, i * 0.003) for i in range(4)]
    got = estimate_step(reqs)
    assert got is not None and abs(got - 0.010) < 1e-9
