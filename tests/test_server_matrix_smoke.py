"""``server_matrix.py`` and ``matrix_cell.py`` at a tiny size: tables, names, resume, Ctrl-C.

(Their own file, so that pytest-xdist runs them beside the other benchmarks' smoke tests.)"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from ._bench import ROOT, run_benchmark


def test_server_matrix_smoke() -> None:
    import os

    os.environ["FAIRSTREAM_MATRIX_SCALE"] = "0.25"
    try:
        lines = run_benchmark(
            "server_matrix.py", "--quick", "--rows", "cont-8", "--workloads", "demo",
            "--policies", "naive,sorted,best-fixed,auto,auto-warm", "--sweep", "4",
        )  # fmt: skip
    finally:
        del os.environ["FAIRSTREAM_MATRIX_SCALE"]
    rows = [ln.split() for ln in lines if ln.startswith("  ") and len(ln.split()) == 10]
    table = [cells for cells in rows if cells[1].replace(".", "").isdigit()]  # figures only
    assert [cells[0] for cells in table] == ["naive", "sorted", "best-fixed", "auto", "auto-warm"]
    assert float(table[0][1]) == float(table[0][2]) == 1.0  # makespan, E2E over naive's own
    verdict = "  auto vs the better of naive and sorted, and its targets:"
    assert any(ln.startswith(verdict) for ln in lines)
    checks = next(ln for ln in lines if ln.startswith("    span/better "))
    for name in ("good4/better", "e2e/better", "good4/best", "ttft p50 steps"):  # continuous
        assert f"; {name} " in checks
    assert any("auto cells miss a target" in ln for ln in lines)
    assert lines[-1].endswith("of 1 auto cells meet every target")
    assert any(ln.startswith("| cont-8 / demo | ") for ln in lines)
    # the sweep's frontier: can a fixed concurrency meet the makespan and goodput targets?
    assert any(ln.startswith("  fixed N, span/better / good4/best: 4: ") for ln in lines)
    # the widest swept limit against sorted (a burst), seed by seed: the cell's own noise
    assert any(ln.startswith("  fixed:4 / sorted, median (seeds' range): span ") for ln in lines)
    assert ", best fixed " in checks  # the best fixed concurrency's TTFT in steps beside auto's
    # per row: its cells, those meeting every target, never worse (and why the others miss)
    assert any(ln.startswith("| cont-8 | 1 | ") for ln in lines)


def test_server_matrix_refuses_a_name_it_does_not_know() -> None:
    """A misspelt row or workload is an error naming the known ones, not an empty run."""
    for args in (
        ["--rows", "cont-16,cont16"],
        ["--workloads", "demo,poison50"],
        ["--policies", "naive,atuo"],
    ):
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "server_matrix.py"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert out.returncode == 2 and out.stdout == ""
        assert "unknown" in out.stderr and any(
            w in out.stderr for w in ("cont16", "poison", "atuo")
        )


def test_server_matrix_resumes_the_rows_a_file_kept(tmp_path: Path) -> None:
    """``--resume``: a row's finished workloads are printed from the file, not run again (a row
    stopped midway runs only what it had left); a file that other arguments wrote is refused."""
    import os

    kept = tmp_path / "rows.jsonl"
    args = ["--quick", "--rows", "cont-8", "--workloads", "demo,prefill"]
    args += ["--policies", "naive,sorted,auto", "--resume", str(kept)]
    os.environ["FAIRSTREAM_MATRIX_SCALE"] = "0.25"
    try:
        first = run_benchmark("server_matrix.py", *args)
        header, demo, _ = kept.read_text().splitlines()
        kept.write_text(f"{header}\n{demo}\n")  # as if stopped during the prefill mix
        again = run_benchmark("server_matrix.py", *args)
        after_again = kept.read_text().splitlines()
        done = run_benchmark("server_matrix.py", *args)
    finally:
        del os.environ["FAIRSTREAM_MATRIX_SCALE"]
    assert again[1].endswith(": 0 row(s) done, 1 begun") and done[1].endswith(": 1 row(s) done")
    # the demo burst kept, the prefill mix run again (one new line), then nothing run at all
    assert after_again[:2] == [header, demo] and len(after_again) == 3
    assert '"prefill"' in after_again[2] and kept.read_text().splitlines() == after_again

    def cells(lines: list[str], workload: str) -> list[str]:
        start = lines.index(next(ln for ln in lines if ln.startswith(f"cont-8 / {workload}")))
        return [ln for ln in lines[start + 1 :] if ln.startswith("  ")][:4]

    assert cells(again, "demo") == cells(first, "demo")
    assert cells(done, "prefill") == cells(again, "prefill")
    assert any(ln.startswith("| cont-8 / prefill") for ln in again)
    other = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "server_matrix.py"), *args[:-3], "naive,auto",
         "--resume", str(kept)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert other.returncode != 0 and "differs in policies" in other.stderr
    # made by other code: no longer resumed, still shown (--show runs nothing)
    head = json.loads(after_again[0])
    kept.write_text("\n".join([json.dumps({**head, "code": "0" * 16}), *after_again[1:]]) + "\n")
    os.environ["FAIRSTREAM_MATRIX_SCALE"] = "0.25"
    try:
        stale = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "server_matrix.py"), *args],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        shown = run_benchmark("server_matrix.py", "--show", str(kept))
    finally:
        del os.environ["FAIRSTREAM_MATRIX_SCALE"]
    assert stale.returncode != 0 and "differs in code" in stale.stderr
    assert f"made by src {'0' * 16} (the code now: " in shown[0]
    assert cells(shown, "demo") == cells(done, "demo")
    assert cells(shown, "prefill") == cells(done, "prefill")


def test_server_matrix_stopped_midway_still_prints_its_table() -> None:
    """Ctrl-C after the first row: the rows done get their verdicts and summary table."""
    import os
    import signal

    env = {**os.environ, "FAIRSTREAM_MATRIX_SCALE": "0.25"}
    args = ["--quick", "--rows", "cont-8,static-B4", "--workloads", "demo"]
    args += ["--policies", "naive,sorted,auto"]
    # (a shell's background job ignores SIGINT, and its children inherit that: not a terminal's)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "server_matrix.py"), *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        for line in proc.stdout:  # the first row's checks: it is done, the second has begun
            lines.append(line.rstrip("\n"))
            if line.startswith("    span/better "):
                proc.send_signal(signal.SIGINT)
                break
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines += rest.splitlines()
    assert proc.returncode == 0
    assert "stopped after 1 of 2 rows" in lines, "\n".join(lines)
    # rows run in the matrix's order: static-B4 first
    assert any(ln.startswith("| static-B4 / demo | ") for ln in lines)
    assert not any(ln.startswith("| cont-8 /") for ln in lines)
    assert lines[-1].endswith("of 1 auto cells meet every target")


def test_matrix_cell_smoke() -> None:
    """One quick cell, naive and auto side by side: a line per run, where its E2E went, auto's
    settling, medians."""
    lines = run_benchmark(
        "matrix_cell.py", "--row", "cont-8", "--workload", "demo", "--seeds", "1", "--quick",
        "--sends", "4", "--slices",
    )  # fmt: skip
    runs = {ln.split()[0]: ln for ln in lines if ln.startswith(("naive ", "auto "))}
    assert set(runs) == {"naive", "auto"}
    assert all("cpu/wall" in ln and "lag p90/max ms" in ln for ln in runs.values())
    [settled] = [ln for ln in lines if "auto settled: " in ln]
    late, total = (int(x) for x in settled.split("threshold ")[1].split(",")[0].split(" of "))
    assert total == 16 and 0 <= late <= total  # every start of the quick demo burst
    sends = [ln for ln in lines if " handovers " in ln and " waiting " in ln]
    assert len(sends) == 4  # every 4th of its 16 sends
    sliced = [ln for ln in lines if " sent, " in ln and " on time " in ln]
    assert sum(int(ln.split(" s: ")[1].split()[0]) for ln in sliced) == 32  # each run's 16
    split = [ln for ln in lines if "E2E's parts, p50 ms: " in ln]
    assert len(split) == 2 and all("most running at once" in ln for ln in split)
    last = lines[-1].split()  # the medians table: policy, 3 figures and ratios, E2E's parts
    assert last[0] == "auto" and last[2].endswith("x") and len(last) == 10


def test_server_matrix_judges_llama_rows_by_the_step_each_workload_recorded(
    tmp_path: Path,
) -> None:
    """llama.cpp's step is measured as its row starts and kept on each workload's line:
    ``--show`` judges a workload by its own line's step, and a line without one (older files) by a
    fixed 18 ms."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from matrix_report import Cell
    from matrix_resume import code_hash

    def cell(ttft50: float) -> dict[str, object]:
        c = Cell([10.0] * 3, [1.0] * 3, [2.0] * 3, [5.0] * 3, [100.0] * 3, [100.0] * 3,
                 [ttft50] * 3, [2 * ttft50] * 3)  # fmt: skip
        return dataclasses.asdict(c)

    def line(workload: str, ttft50: float, calib: dict[str, float] | None) -> str:
        names = ("naive", "sorted", "best-fixed", "auto")
        out: dict[str, object] = {
            "row": "llama-np4",
            "results": {workload: {p: cell(ttft50) for p in names}},
        }
        if calib:
            out["calib"] = calib
        return json.dumps(out)

    header = {"quick": False, "seeds": 3, "workloads": "demo,burst160", "policies": "naive",
              "sweep": [1], "scale": 0.5, "code": code_hash()}  # fmt: skip
    kept = tmp_path / "kept.jsonl"
    lines = [json.dumps(header), line("demo", 0.09, None)]
    lines.append(line("burst160", 0.2, {"step": 0.05, "full": 0.125}))
    kept.write_text("\n".join(lines) + "\n")
    shown = run_benchmark("server_matrix.py", "--show", str(kept))
    steps = {
        ln.split(" / ")[1].split()[0]: float(ln.split("ttft p50 steps ")[1].split()[0])
        for ln in shown
        if ln.startswith("| llama-np4 / ") and "ttft p50 steps " in ln
    }
    assert steps == {"demo": round(0.09 / 0.018, 3), "burst160": round(0.2 / 0.05, 3)}
