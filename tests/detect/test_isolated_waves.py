"""Waves of first tokens with room around them: the ones that tell a static server's B.

A client reading a backlog late chains the first tokens of two short batches a step apart into
one wave (B = 9-13 read on a B=8 server over HTTP), or splits a batch at a stall;
a batch that ran a while between two others shows whole.
"""

from __future__ import annotations

from fairstream._detect import _signals as sig
from fairstream._detect._view import Req

STEP = 0.012
TOL = 1.5 * STEP


def _wave(start: float, n: int, name: str, apart: float = 0.003) -> list[Req]:
    return [Req(f"{name}{i}", None, 0.0, start + i * apart, start + 1.0, 8, 16) for i in range(n)]


def test_a_wave_near_a_chain_of_short_batches_is_left_out() -> None:
    # two batches of 1-token answers a step apart, read as one wave of 16, and the next batch
    # two steps later: none has room around it
    near = _wave(1.0, 8, "a") + _wave(1.0 + 8 * 0.003 + STEP, 8, "b") + _wave(1.08, 8, "c")
    groups = sig.start_clusters(near, TOL).groups
    assert [len(g) for g in groups] == [16, 8]
    assert sig.isolated(groups, 3 * TOL) == []


def test_waves_far_apart_are_all_kept() -> None:
    reqs = _wave(1.0, 8, "a") + _wave(1.6, 8, "b") + _wave(2.2, 8, "c")
    groups = sig.start_clusters(reqs, TOL).groups
    assert [len(g) for g in sig.isolated(groups, 3 * TOL)] == [8, 8, 8]


def test_a_wave_with_a_neighbour_within_the_gap_is_not_isolated() -> None:
    reqs = _wave(1.0, 8, "a") + _wave(1.0 + 0.021 + 2 * TOL, 8, "b") + _wave(2.0, 8, "c")
    groups = sig.start_clusters(reqs, TOL).groups
    assert [len(g) for g in groups] == [8, 8, 8]
    assert [len(g) for g in sig.isolated(groups, 3 * TOL)] == [8]
    assert sig.isolated(groups, 3 * TOL)[0][0].rid == "c0"
