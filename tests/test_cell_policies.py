"""``benchmarks/cell_policies.py``: the names ``matrix_cell.py`` takes map to the variants the
closing notes cite, and session 51's churn-sized probe counts what it says."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import cell_policies as cp


def test_names_map_to_their_variants() -> None:
    assert type(cp.make("auto")) is cp.WatchedAuto
    churn, bare = cp.make("auto-churn"), cp.make("auto-churn-norun")
    assert isinstance(churn, cp.ChurnAuto) and churn.guard
    assert isinstance(bare, cp.ChurnAuto) and not bare.guard
    floor = cp.make("auto-floor32")
    assert isinstance(floor, cp.FloorAuto) and floor.floor == 32
    options = cp.make("auto:handover=0.5+start=4")
    assert isinstance(options, cp.WatchedAuto) and (options.handover, options.start) == (0.5, 4)
    assert cp.make("fixed:8") == "fixed:8"  # server_matrix's own names pass through


def test_churn_is_the_ends_within_a_first_tokens_time() -> None:
    auto = cp.ChurnAuto()
    assert auto.churn() == 0  # nothing seen yet
    auto._ttfts.extend([0.04, 0.05, 0.06])  # median 50 ms: a window of 0.4 s
    auto._now = 1.0
    auto._ends.extend([0.5, *(0.6 + 0.01 * i for i in range(40))])  # 40 ends in the window
    assert auto.churn() == 5  # 100 ends/s x 50 ms


def test_the_probe_grows_by_the_churn_only_while_probing() -> None:
    auto = cp.ChurnAuto()
    auto.kind, auto.slow_start, auto.peak = "continuous", False, 10
    auto._ttfts.extend([0.05] * 3)
    auto._now = 1.0
    auto._ends.extend(0.6 + 0.01 * i for i in range(40))
    auto._probe = 0
    idle = auto.budget()
    auto._probe = 1
    assert auto.budget() == idle + 1 + auto.churn()
