"""The matrix's reading of a missing cell names what stands in the way: a cold start, a fixed
limit auto did not find, TTFT traded against the rest, or nothing any limit gets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import matrix_report
from matrix_report import Cell
from matrix_targets import checks

STEP = 0.02  # model s: a TTFT p50 of 0.04 s is 2 steps


def cell(seeds: int = 1, **kw: float | list[float]) -> Cell:
    """A cell whose measures are the defaults (a prompt-enough, never-worse run) but ``kw``."""
    base: dict[str, float | list[float]] = {"makespan": 10.0, "good4": 100.0, "e2e_p50": 2.0}
    base.update({"short_p50": 1.0, "ttft50": 0.03, "ttft99": 0.5, "oracle": 9.5})
    values = {k: v if isinstance(v, list) else [v] * seeds for k, v in {**base, **kw}.items()}
    return Cell(**values)  # type: ignore[arg-type]


def reading(kind: str, workload: str, **cells: Cell) -> matrix_report.Reading | None:
    """Read auto's cell among ``cells`` (fixed_16 names the policy fixed:16)."""
    named = {k.replace("fixed_", "fixed:").replace("_", "-"): c for k, c in cells.items()}
    found = checks(kind, workload, named, STEP)  # type: ignore[arg-type]
    return matrix_report.read("row / wl", kind, workload, named, STEP, found)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    matrix_report.READINGS.clear()


def test_a_cell_meeting_every_target_is_not_read() -> None:
    assert reading("continuous", "demo", naive=cell(), sorted=cell(), auto=cell(),
                   best_fixed=cell()) is None  # fmt: skip
    assert matrix_report.READINGS == []


def test_one_fixed_limit_meeting_every_target_is_auto_s_shortfall() -> None:
    r = reading(
        "continuous",
        "burst160",
        naive=cell(good4=60.0),
        sorted=cell(good4=60.0),
        auto=cell(good4=70.0),  # 0.7x the best fixed limit's goodput
        fixed_4=cell(makespan=20.0, good4=50.0),  # prompt, but twice as long
        fixed_16=cell(good4=100.0),
        best_fixed=cell(good4=100.0),
        auto_warm=cell(good4=80.0),  # warm misses too: not the cold start
    )
    assert r is not None and r.why == "auto short of fixed 16"
    assert [c.name for c in r.missed] == ["good4/best"]
    assert r.reach == {"good4/best": ["16"]}


def test_warm_meeting_what_cold_misses_is_a_cold_start() -> None:
    r = reading(
        "sequential",
        "poisson50",
        naive=cell(),
        sorted=cell(),
        auto=cell(e2e_p50=2.2),
        fixed_16=cell(e2e_p50=2.2),
        auto_warm=cell(e2e_p50=2.0),
    )
    assert r is not None and r.why == "cold start"
    assert r.reach == {"e2e/better": ["warm"]}


def test_ttft_traded_against_goodput_is_read_apart_from_the_rest() -> None:
    common = {"naive": cell(good4=60.0, ttft50=0.1), "sorted": cell(good4=60.0, ttft50=0.1)}
    r = reading(
        "continuous",
        "demo",
        **common,
        auto=cell(good4=70.0, ttft50=0.08),  # misses goodput and TTFT
        fixed_1=cell(makespan=40.0, good4=30.0, ttft50=0.03),  # prompt, 4x as long
        fixed_16=cell(good4=100.0, ttft50=0.06),  # the goodput, 3 steps
        best_fixed=cell(good4=100.0, ttft50=0.06),
        auto_warm=cell(good4=70.0, ttft50=0.08),
    )
    assert r is not None and r.why == "TTFT trades off; auto short of fixed 16"
    assert r.reach == {"good4/best": ["16"], "ttft p50 steps": ["1"]}
    only_ttft = reading(
        "continuous",
        "demo",
        **common,
        auto=cell(ttft50=0.08),
        fixed_1=cell(makespan=40.0, good4=30.0, ttft50=0.03),
        best_fixed=cell(),
    )
    assert only_ttft is not None and only_ttft.why == "TTFT trades off"


def test_a_target_no_limit_meets_is_past_every_limit() -> None:
    r = reading(
        "static",
        "poisson100",
        naive=cell(short_p50=4.0),
        sorted=cell(short_p50=4.0),
        auto=cell(short_p50=2.0),  # 2x better, the target is 3x
        fixed_8=cell(short_p50=1.6),  # 2.5x
        auto_warm=cell(short_p50=2.0),
    )
    assert r is not None and r.why == "past every limit"
    assert r.reach == {"short x": []}


def test_each_seed_is_checked_on_its_own() -> None:
    r = reading(
        "sequential",
        "burst160",
        naive=cell(3),
        sorted=cell(3),
        auto=cell(3, makespan=[10.2, 11.0, 11.5]),  # one seed within 1.05x
        fixed_4=cell(3, makespan=[12.0, 12.0, 12.0]),
    )
    assert r is not None and r.met_by_seed == {"span/better": 1} and r.seeds == 3
    assert r.why == "past every limit"


def test_the_table_counts_each_reading(capsys: pytest.CaptureFixture[str]) -> None:
    test_one_fixed_limit_meeting_every_target_is_auto_s_shortfall()
    test_a_target_no_limit_meets_is_past_every_limit()
    matrix_report.table()
    out = capsys.readouterr().out
    assert "| row / wl | auto short of fixed 16 | good4/best 0.700 (0/1; 16) |" in out
    assert "2 cells miss: past every limit 1, auto short of a fixed limit 1;" in out


def test_each_row_counts_its_cells(capsys: pytest.CaptureFixture[str]) -> None:
    ok = checks("sequential", "demo", {"naive": cell(), "sorted": cell(), "auto": cell()}, STEP)  # type: ignore[arg-type]
    test_a_target_no_limit_meets_is_past_every_limit()  # "row / wl" misses short x only
    missed = checks("static", "poisson100", {"naive": cell(short_p50=4.0),  # type: ignore[arg-type]
                    "sorted": cell(short_p50=4.0), "auto": cell(short_p50=2.0)}, STEP)  # fmt: skip
    matrix_report.by_row([("other / demo", ok), ("row / wl", missed), ("row / demo", ok)])
    out = capsys.readouterr().out
    assert "| other | 1 | 1 | 1 | - |" in out
    assert "| row | 2 | 1 | 2 | past every limit 1 |" in out  # short x is no "never worse"
