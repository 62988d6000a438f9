"""The matrix's cells keep every failed request, the fixed-concurrency sweep's too."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from matrix_report import Cell

MEASURES = ("makespan", "short_p50", "e2e_p50", "long_p50", "good4", "good05", "ttft50", "ttft99")


def one_run(value: float, errors: int) -> Cell:
    run = Cell(errors=errors)
    for name in MEASURES:
        getattr(run, name).append(value)
    return run


def test_take_last_carries_failures_and_the_latest_run() -> None:
    swept = Cell()
    swept.take_last(one_run(1.0, errors=2))
    swept.take_last(one_run(3.0, errors=0))
    assert swept.errors == 2
    assert swept.makespan == [1.0, 3.0]
    assert swept.good4 == [1.0, 3.0]


def test_a_run_where_every_request_failed_counts_its_failures_and_no_figure() -> None:
    swept = Cell()
    swept.take_last(Cell(errors=48))  # add() returns before any figure when nothing is ok
    assert swept.errors == 48
    assert swept.makespan == []
