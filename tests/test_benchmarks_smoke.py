"""Benchmarks run end to end at a tiny size, print their table and exit 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_server_capacity_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "server_capacity.py"),
            "--sizes",
            "4,16",
            "--window",
            "0.5",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["4", "16"]
    for row in rows:
        period = float(row[1])
        assert 15.0 < period < 40.0  # a 20 ms step, measured: sane, not exact
    assert lines[-1].startswith("largest N with drift <= 5%:")


def test_overhead_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "overhead.py"),
            "--chunks",
            "400",
            "--streams",
            "4",
            "--pairs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    rows = {
        line.split()[0]: line.split()
        for line in out.stdout.splitlines()
        if line.split() and line.split()[0] in ("openai", "langchain", "httpx")
    }
    assert set(rows) == {"openai", "langchain", "httpx"}
    for cells in rows.values():
        assert all(float(x) > 0 for x in cells[2:4])  # CPU per chunk, raw and instrumented
