"""``benchmarks/cell_policies.py``: the names ``matrix_cell.py`` takes map to the variants the
closing notes cite, and the churn-sized probe counts what it says."""

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
    assert isinstance(cp.make("auto-rounds"), cp.RoundAuto)
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


def test_a_round_that_grew_nothing_stops_the_probe_and_backs_off() -> None:
    auto = cp.RoundAuto()
    auto.kind, auto.slow_start, auto.peak, auto._probe = "continuous", False, 16, 1
    auto._ttfts.extend([0.05] * 3)
    auto._tpots.extend([0.01] * 3)
    auto._fastest[17] = 0.02  # the quickest first token: a step is 10 ms
    auto._round = (1.0, 16, 3)  # opened at 1.0 s at a peak of 16, three above it
    auto._close_round(1.05)  # before two first tokens' time: still open
    assert auto._round is not None and auto._probe == 1
    auto._close_round(1.2)
    assert auto._round is None and auto.rounds == [0, 1]
    assert (auto._probe, auto._misses, auto._calm) == (0, 1, 32)  # 16 completions, doubled
    auto._probe, auto._round = 1, (2.0, 16, 3)
    auto.peak = 18  # grew within the round
    auto._close_round(2.2)
    assert auto.rounds == [1, 1] and auto._misses == 0 and auto._probe == 1
