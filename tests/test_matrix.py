"""The matrix judge (``python -m benchmarks.matrix``): one real cell at tiny size, resumed; and
``show`` and ``compare`` on small hand-made results files whose verdicts are known."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from benchmarks.matrix._pin import pinning
from benchmarks.matrix._results import SCHEMA
from benchmarks.matrix._show import compare, show

ROOT = Path(__file__).resolve().parents[1]


def matrix(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.matrix", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_one_cell_runs_at_tiny_size_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    args = ["run", "--tiny", "--only", "cont-16 / burst", "--scale", "0.25", "--no-pin"]
    first = matrix(*args, "-o", str(out))
    assert first.returncode == 0, first.stderr[-3000:]
    head, cell = (json.loads(ln) for ln in out.read_text().splitlines())
    assert head["schema"] == SCHEMA and head["size"] == "tiny" and head["seeds"] == 1
    assert head["git"]["commit"] and isinstance(head["git"]["dirty"], bool)
    assert head["machine"]["cores"] and head["python"] and head["pinning"] == "not pinned"
    assert head["time_scale"] == 0.25 and head["date"] and head["code"]
    assert cell["cell"] == "cont-16 / burst" and cell["duration_s"] > 0
    [seed] = cell["seeds"]
    assert set(seed) == {
        "naive",
        "sorted",
        "fixed:4",
        "fixed:16",
        "fixed:32",
        "auto",
        "naive-again",
    }
    assert all(f["errors"] == 0 and f["makespan"] > 0 for f in seed.values())
    assert cell["oracle"][0]["makespan"] > 0  # the engine in virtual time
    assert "| cont-16 / burst |" in first.stdout and "Judged targets met" in first.stdout
    # the same command again: the cell is in the file, nothing runs, nothing is added
    again = matrix(*args, "-o", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 cells, 1 already in" in again.stdout
    assert len(out.read_text().splitlines()) == 2
    # other options are refused, not mixed in
    other = matrix("run", "--tiny", "--only", "cont-16 / burst", "--scale", "0.5", "--no-pin",
                   "-o", str(out))  # fmt: skip
    assert other.returncode != 0 and "time_scale" in other.stderr


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two cores")
def test_pinning_puts_a_server_process_on_its_own_core() -> None:
    pin = pinning(True)
    assert pin.server is not None and pin.client is not None and pin.server != pin.client
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        pin.server_process(child.pid)
        assert os.sched_getaffinity(child.pid) == {pin.server}
    finally:
        child.communicate(b"")
    assert pinning(False).describe() == "not pinned"


# -- hand-made results files ---------------------------------------------------------------


def figs(
    span: float, e2e: float, short: float, ttft: float = 0.1, good4: float = 100.0
) -> dict[str, float]:
    return {"makespan": span, "e2e_p50": e2e, "short_p50": short, "long_p50": span,
            "ttft_p50": ttft, "good4": good4, "errors": 0}  # fmt: skip


def cell(
    name: str, kind: str, workload: str, auto: dict[str, float], **arms: dict[str, float]
) -> dict[str, Any]:
    base = {
        "naive": figs(10.0, 6.0, 5.0),
        "sorted": figs(9.0, 5.0, 0.4),
        "fixed:2": figs(12.0, 7.0, 0.5),
        "fixed:8": figs(9.2, 5.1, 0.45),
        "fixed:16": figs(9.5, 5.3, 0.5),
        "naive-again": figs(10.1, 6.05, 5.02),  # 1% of noise
    }
    seeds = [{**base, **arms, "auto": auto}]
    return {"cell": name, "server": name.split(" / ")[0], "kind": kind, "workload": workload,
            "slots": 8, "step": 0.02, "limits": [2, 8, 16], "seeds": seeds,
            "oracle": [None], "duration_s": 1.0}  # fmt: skip


def write(path: Path, *cells: dict[str, Any]) -> Path:
    head = {"schema": SCHEMA, "fairstream": "0", "git": {"commit": "abc", "dirty": False},
            "code": "x", "date": "d", "machine": {"cpu": "cpu", "cores": 2, "system": "s"},
            "python": "3.11", "pinning": "not pinned", "time_scale": 0.5, "size": "quick",
            "seeds": 1, "cells": [c["cell"] for c in cells], "llama": "built"}  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in [head, *cells]) + "\n")
    return path


def test_compare_flags_a_real_regression_and_passes_what_is_within_noise(tmp_path: Path) -> None:
    good = cell("static-B8 / burst", "static", "burst", figs(9.1, 5.0, 0.3))
    a = write(tmp_path / "a.jsonl", good)
    noisy = write(tmp_path / "b.jsonl", cell("static-B8 / burst", "static", "burst",
                                               figs(9.3, 5.1, 0.31)))  # fmt: skip
    lines, worse = compare(a, noisy)
    assert not worse, lines
    assert "0 worse beyond noise" in lines[-1]
    slower = write(tmp_path / "c.jsonl", cell("static-B8 / burst", "static", "burst",
                                                figs(13.5, 7.5, 0.3)))  # fmt: skip
    lines, worse = compare(a, slower)
    assert worse, lines
    assert "span 1.01 -> 1.50" in lines[1] and "worse" in lines[1]
    # the exit status the CLI gives
    assert matrix("compare", str(a), str(slower)).returncode == 1
    assert matrix("compare", str(a), str(noisy)).returncode == 0


def test_show_marks_a_target_no_arm_meets_infeasible(tmp_path: Path) -> None:
    """Under overload every arm's TTFT p50 is over 2 steps (0.04 s): infeasible, with the best
    arm named; on the static burst short requests come 10x sooner only through auto (met)."""
    slow = {arm: figs(10.0, 6.0, 5.0, ttft=0.5) for arm in ("naive", "sorted", "naive-again")}
    over = cell("static-B8 / overload", "static", "overload", figs(9.0, 5.0, 0.4, ttft=0.3),
                **slow, **{"fixed:2": figs(12.0, 7.0, 0.5, ttft=0.09)})  # fmt: skip
    path = write(tmp_path / "m.jsonl", over)
    text = "\n".join(show(path))
    assert "ttft infeasible (best fixed:2 4.50)" in text, text
    assert "short 12.50 ok" in text
    assert "infeasible (no arm that ran meets them): ttft in 1 cell." in text


def test_a_missing_llama_cell_is_listed_not_dropped(tmp_path: Path) -> None:
    path = write(
        tmp_path / "m.jsonl", cell("cont-16 / burst", "continuous", "burst", figs(9.0, 5.0, 0.4))
    )
    data = path.read_text().splitlines()
    head = json.loads(data[0])
    head["cells"].append("llama-np4 / burst")
    head["llama"] = "llama.cpp is not built: python benchmarks/llama_server.py build"
    path.write_text("\n".join([json.dumps(head), *data[1:]]) + "\n")
    text = "\n".join(show(path))
    assert "| llama-np4 / burst |" in text and "not run: llama.cpp is not built" in text
