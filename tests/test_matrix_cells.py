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


def test_the_code_hash_leaves_out_the_demo_and_nothing_else(tmp_path: Path) -> None:
    """A resume file stays valid across a change to ``fairstream demo`` (no cell runs it), and
    not across any other source change."""
    from matrix_resume import code_hash

    (tmp_path / "_cli").mkdir()
    demo, bench = tmp_path / "_cli" / "_demo.py", tmp_path / "_cli" / "_run.py"
    demo.write_text("x = 1\n")
    bench.write_text("y = 1\n")
    before = code_hash(tmp_path)
    demo.write_text("x = 2\n")
    assert code_hash(tmp_path) == before
    bench.write_text("y = 2\n")
    assert code_hash(tmp_path) != before
