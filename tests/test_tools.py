"""``fairstream demo`` and ``fairstream bench`` as a user runs them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream import ReferenceServer, ServerConfig, StreamTrace, load_jsonl
from fairstream._cli import cli
from fairstream._cli._demo import makespan

from ._bench import run_benchmark


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_demo_quick_shows_the_phenomenon_the_verdict_and_the_cure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = _run("demo", "--quick", "--lang", "zh")
    page = tmp_path / "fairstream-demo.html"  # written by default, its path on the last line
    assert out.rstrip().splitlines()[-1] == f"HTML report: {page}"
    html = page.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in html and "静态批处理" in html  # the page's verdict, in zh
    assert html.count('class="row"') == 32 and 'id="arms"' in html  # the burst; every run
    assert "成功响应" in out and "首字延迟" in out  # the seed's log line
    assert "legend:" in out  # the timeline
    assert "verdict: static" in out and "batch_end" in out
    assert "before / after" in out
    rows = [ln for ln in out.splitlines() if "static (seed)" in ln]
    assert len(rows) == 3  # all at once, fairstream cold, fairstream warm
    naive, cold, warm = (float(r.split("│")[3]) for r in rows)  # short p50
    assert cold < naive and warm < naive  # short requests come back sooner through fairstream
    assert "auto: continuous" in out  # the warm continuous run ended knowing the server
    assert "4x faster than a real 7B model" in out  # --quick keeps the 0.25 time scale


def test_demo_makespan_runs_from_the_first_submission_to_the_last_end() -> None:
    """Queue time counts (a request held by the dispatcher was submitted); a trace without
    ``enqueued`` (sent naively) starts at its send."""
    held = StreamTrace(request_id="a", enqueued=10.0, sent=10.4, end=12.0)
    naive = StreamTrace(request_id="b", sent=10.2, end=13.5)
    assert makespan([held, naive]) == pytest.approx(3.5)
    assert makespan([naive]) == pytest.approx(3.3)


def test_demo_refuses_a_time_scale_out_of_range() -> None:
    result = CliRunner().invoke(cli, ["demo", "--quick", "--time-scale", "0"])
    assert result.exit_code == 2 and "--time-scale" in result.output


@pytest.fixture(scope="module")
def static_server() -> object:
    with ReferenceServer.in_thread(
        ServerConfig(mode="static", batch_size=4, time_scale=0.25)
    ) as handle:
        yield handle


def _bench(handle: object, out: Path, *extra: str) -> str:
    return _run(
        "bench", "--base-url", handle.base_url, "--model", "fairstream-ref",  # type: ignore[attr-defined]
        "--requests", "12", "--output-tokens", "mix:4,24", "--out", str(out), *extra,
    )  # fmt: skip


def test_bench_writes_every_promised_file(static_server: object, tmp_path: Path) -> None:
    out = _bench(static_server, tmp_path / "a", "--policy", "auto", "--slo-ttft", "5")
    assert "TTFT" in out and "E2E from submit" in out and "detector:" in out
    files = {p.name for p in (tmp_path / "a").iterdir()}
    assert files == {"traces.jsonl", "results.json", "report.json", "timeline.png"}
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    assert results["schema"] == "fairstream.bench/1" and results["ok"] == 12
    assert results["policy"].startswith("auto")
    assert results["goodput_requests_per_second"] > 0 and results["queue_time"] is not None
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["schema"] == "fairstream.report/1"
    assert len(load_jsonl(tmp_path / "a" / "traces.jsonl")) == 12
    assert (tmp_path / "a" / "timeline.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_compare_prints_ratios(static_server: object, tmp_path: Path) -> None:
    _bench(static_server, tmp_path / "a", "--policy", "auto")
    _bench(static_server, tmp_path / "b", "--concurrency", "12")
    out = _run(
        "bench", "--compare", str(tmp_path / "b/results.json"), str(tmp_path / "a/results.json")
    )
    assert "B/A" in out and "makespan s" in out
    ratio_line = next(ln for ln in out.splitlines() if "output tok/s" in ln)
    assert float(ratio_line.split("│")[-2]) > 0


def test_bench_reports_its_own_cpu_and_warns_past_the_limit(
    static_server: object, tmp_path: Path
) -> None:
    out = _bench(static_server, tmp_path / "d", "--max-client-cpu", "0")
    assert "warning:" in out and "of a core" in out
    cpu = json.loads((tmp_path / "d" / "results.json").read_text())["client_cpu"]
    assert cpu["seconds"] > 0 and cpu["share_of_a_core"] > 0
    assert cpu["per_request_ms"] > 0 and 0 < cpu["per_chunk_us"] < 1e6 * cpu["seconds"]
    quiet = _bench(static_server, tmp_path / "e", "--max-client-cpu", "100")
    assert "warning:" not in quiet


def test_bench_without_matplotlib_says_how_to_get_pictures(
    static_server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = _bench(static_server, tmp_path / "c")
    assert "no pictures" in out and "fairstream[plot]" in out
    assert not (tmp_path / "c" / "timeline.png").exists()
    assert (tmp_path / "c" / "results.json").exists()


def test_bench_sweep_stops_when_throughput_stalls(tmp_path: Path) -> None:
    config = ServerConfig(mode="continuous", max_num_seqs=2, time_scale=0.25)
    with ReferenceServer.in_thread(config) as handle:
        out = _run(
            "bench", "--base-url", handle.base_url, "--model", "fairstream-ref",
            "--requests", "8", "--output-tokens", "8", "--sweep", "--out", str(tmp_path),
        )  # fmt: skip
    levels = [ln for ln in out.splitlines() if ln.startswith("concurrency")]
    # 1, 2, 4 (then stop: no more throughput past the server's 2 slots); a noisy level may
    # add one or two more, but it stops long before the 1024 cap
    assert 2 <= len(levels) <= 6, levels
    results = json.loads((tmp_path / "results.json").read_text())
    assert [s["concurrency"] for s in results["sweep"]][:2] == [1, 2]
    assert (tmp_path / "sweep.png").exists()


def test_bench_bad_workload_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["bench", "--base-url", "http://x/v1", "--model", "m", "--output-tokens", "weird:1"]
    )
    assert result.exit_code == 2 and "bad length spec" in result.output


def test_static_vs_continuous_benchmark_smoke() -> None:
    lines = run_benchmark(
        "static_vs_continuous.py", "--requests", "64", "--batch", "8", "--seeds", "1"
    )
    ratios = [ln for ln in lines if "over static" in ln]
    assert len(ratios) == 2
    assert all(float(ln.split("throughput x")[1].split(",")[0]) > 1.0 for ln in ratios)
