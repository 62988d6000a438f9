"""Run a benchmark script as a user does, for the smoke tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_benchmark(
    name: str, *args: str, timeout: float = 180, results: Path | None = None
) -> list[str]:
    """The benchmark's stdout lines, after checking it exited 0.

    Its results file goes to ``results`` (a directory; by default a temporary one), never over
    the committed ``benchmarks/results``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FAIRSTREAM_RESULTS_DIR": str(results or tmp)}
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / name), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def results_of(directory: Path, benchmark: str) -> dict[str, Any]:
    """A results file a benchmark wrote, checked for the record every file carries."""
    data: dict[str, Any] = json.loads((directory / f"{benchmark}.json").read_text())
    assert data["benchmark"] == benchmark and data["fairstream"]
    assert data["git"]["commit"] and isinstance(data["git"]["dirty"], bool)
    assert data["machine"]["cores"] and data["machine"]["python"] and data["date"]
    return data
