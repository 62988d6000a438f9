"""Benchmarks run end to end at a tiny size, print their table and exit 0."""

from __future__ import annotations

from pathlib import Path

from ._bench import results_of, run_benchmark


def test_server_capacity_smoke() -> None:
    lines = run_benchmark("server_capacity.py", "--sizes", "4,16", "--window", "0.5")
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["4", "16"]
    for row in rows:
        period = float(row[1])
        assert 15.0 < period < 40.0  # a 20 ms step, measured: sane, not exact
    assert lines[-1].startswith("largest N with drift <= 5%:")


def test_overhead_smoke() -> None:
    lines = run_benchmark(
        "overhead.py", "--short", "2", "--long", "6", "--streams", "2", "--pairs", "1"
    )
    families = ("openai", "responses", "langchain", "httpx")
    split = [line.split() for line in lines]
    paired = {c[0]: c for c in split if c and c[0] in families and len(c) == 7}
    alone = {c[0]: c for c in split if c and c[0] in families and len(c) == 4}
    assert set(paired) == set(families)
    for cells in paired.values():
        for x in cells[1:5] + cells[6:]:
            float(x)  # numbers (a slope at this tiny size may take either sign)
    assert set(alone) == {"openai", "responses", "langchain"}
    for cells in alone.values():
        assert all(float(x) > 0 for x in cells[1:3])  # CPU per chunk, raw and instrumented


def test_detector_benchmark_smoke() -> None:
    lines = run_benchmark("detector.py", "--corpus", "4", "--presets", "default-7b", "--tpc", "1")
    # a wrong verdict is marked "<- WRONG" after the columns; accuracy is test_probe_live's job
    rows = [line.split("<-")[0].split() for line in lines if line.startswith("default-7b")]
    assert len(rows) == 5  # one probe per behaviour
    assert all(int(r[-2]) <= 32 for r in rows)  # requests spent within the default budget
    assert any(line.startswith("right ") for line in lines)


def test_replay_check_smoke(tmp_path: Path) -> None:
    args = ["--seeds", "1", "--requests", "8", "--servers", "1", "--starve", "none"]
    lines = run_benchmark("replay_check.py", *args, results=tmp_path)
    [row] = [ln for ln in lines if ln.startswith("static B4")]
    held, refused, missed = map(int, row.split()[-3:])
    assert held + refused + missed == 1 and missed == 0, row
    data = results_of(tmp_path, "replay_check")
    assert data["parameters"]["requests"] == 8 and len(data["figures"]["cases"]) == 1


def test_demo_rows_smoke(tmp_path: Path) -> None:
    """One run at a quarter of the pace: every row's figures, measured, in the results file."""
    lines = run_benchmark(
        "demo_rows.py", "--runs", "1", "--batches", "24", "--scale", "0.25", results=tmp_path
    )
    assert any("sooner through auto" in ln for ln in lines), lines
    data = results_of(tmp_path, "demo_rows")
    assert data["parameters"] == {"runs": 1, "batches": "24", "scale": 0.25}
    servers = data["figures"]["servers"]
    assert set(servers) == {"static B=8", "continuous 32", "static B=24"}
    for rows in servers.values():
        assert set(rows) == {"all at once", "sorted at once", "auto cold", "auto warm"}
        assert all(r["makespan"]["median"] > 0 for r in rows.values())


def test_first_burst_smoke(tmp_path: Path) -> None:
    """One run at a twentieth of the pace, 2 processes sharing a pool over a real redis-server:
    every arm measured in fresh processes, in the results file."""
    lines = run_benchmark(
        "first_burst.py", "--runs", "1", "--scale", "0.05", "--processes", "2", results=tmp_path
    )
    assert any("cold over warm" in ln for ln in lines), lines
    arms = results_of(tmp_path, "first_burst")["figures"]["arms"]
    assert set(arms) == {
        "naive", "auto cold", "auto warm", "2 processes naive", "2 processes auto"
    }  # fmt: skip
    assert all(a["short_p50"] > 0 and a["makespan"] >= a["short_p50"] for a in arms.values())
