"""``fairstream analyze`` and ``fairstream probe``: the stable --json contract and the rest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream import (
    JsonlSink,
    MissingExtraError,
    ReferenceServer,
    ascii_timeline,
    load_jsonl,
    plot_timeline,
)
from fairstream._cli import cli

from ._modes import config
from ._simtraces import Workload, sim_traces
from .test_degraded import KEYS
from .test_summaries import SEED_LINES


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_analyze_seed_log_json_is_one_object(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("\n".join([*SEED_LINES, "some other line"]) + "\n", encoding="utf-8")
    code, out, err = _run("analyze", str(log), "--json", "--timeline")
    assert code == 0
    data = json.loads(out)  # stdout is exactly one JSON object
    assert set(data) == KEYS
    assert data["synchronized_completion"] is True
    skipped = [e["value"] for e in data["evidence"] if e["signal"] == "skipped_lines"]
    assert skipped == [1]
    assert "skipped 1 lines" in err and "legend" in err  # timeline goes to stderr


def test_analyze_jsonl_traces_readable_report(tmp_path: Path) -> None:
    cfg = config("static/batch_end", "default-7b", 1)
    path = tmp_path / "traces.jsonl"
    sink = JsonlSink(path)
    for t in sim_traces(cfg, Workload(n=24, window=0.5)):
        sink(t)
    sink.close()
    assert len(load_jsonl(path)) == 24
    code, out, _ = _run("analyze", str(path), "--timeline")
    assert code == 0
    assert "verdict: static" in out and "evidence" in out and "legend" in out
    code, out, _ = _run("analyze", str(path), "--json")
    assert json.loads(out)["verdict"] == "static"


def test_analyze_garbage_file_is_unknown_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "junk.txt"
    path.write_bytes(b"\xff\xfe garbage\nmore garbage\n{not json\n")
    code, out, _ = _run("analyze", str(path), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "unknown"


def test_analyze_missing_file_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["analyze", "/nonexistent/file.log"])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_probe_command_json(tmp_path: Path) -> None:
    cfg = config("static/batch_end", "default-7b", 1)
    saved = tmp_path / "probe.jsonl"
    with ReferenceServer.in_thread(cfg) as handle:
        code, out, _ = _run(
            "probe", "--base-url", handle.base_url, "--model", cfg.model, "--json",
            "--save-traces", str(saved),
        )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert set(data) == KEYS
    assert data["verdict"] == "static" and data["release"] == "batch_end"
    assert data["batch_size"] == cfg.batch_size
    assert data["recommendation"] == {"policy": "waves", "concurrency": cfg.batch_size}
    assert len(load_jsonl(saved)) == next(
        e["value"] for e in data["evidence"] if e["signal"] == "probe"
    )


def test_probe_unreachable_server_is_a_clear_error() -> None:
    result = CliRunner().invoke(
        cli, ["probe", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--json"]
    )
    assert result.exit_code == 1 and "probe failed" in result.output


def test_timelines_draw_every_state(tmp_path: Path) -> None:
    cfg = config("static/batch_end", "default-7b", 1)
    traces = sim_traces(cfg, Workload(n=8, window=0.05))
    text = ascii_timeline(traces, width=60)
    rows = [ln for ln in text.splitlines()[1:-1]]
    assert len(rows) == 8
    assert all("F" in r and "=" in r for r in rows)
    assert any("-" in r for r in rows)  # some stream held open after its content
    png = plot_timeline(traces, tmp_path / "t.png", title="test")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_without_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    traces = sim_traces(config("sequential", "default-7b", 1), Workload(n=3, window=0.0))
    with pytest.raises(MissingExtraError, match=r"fairstream\[plot\]"):
        plot_timeline(traces, tmp_path / "t.png")
