"""Run a benchmark script as a user does, for the smoke tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_benchmark(name: str, *args: str, timeout: float = 180) -> list[str]:
    """The benchmark's stdout lines, after checking it exited 0."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()
