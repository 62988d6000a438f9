"""Traces survive a crash: a process streaming through the reference server is killed with
SIGKILL mid-run; every trace it had finished is on disk, and the file reads back."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from fairstream import ReferenceServer, ServerConfig, load_jsonl, read_traces
from fairstream._recorder import parse_jsonl

CHILD = Path(__file__).with_name("_crash_child.py")
SERVER = ServerConfig(step_ms=20.0, per_seq_ms=0.0, prefill_ms_per_token=0.0, time_scale=0.25)


def test_sigkill_loses_no_finished_trace(tmp_path: Path, capsys: object) -> None:
    path = tmp_path / "traces.jsonl"
    with ReferenceServer.in_subprocess(SERVER) as server:
        child = subprocess.Popen(
            [sys.executable, str(CHILD), server.base_url, str(path)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert child.stdout is not None
        announced: set[str] = set()
        try:
            for line in child.stdout:  # wait until a good number have finished, then kill
                announced.add(line.split()[1])
                if len(announced) >= 40:
                    child.send_signal(signal.SIGKILL)
                    break
            announced |= {ln.split()[1] for ln in child.stdout.read().splitlines() if ln}
        finally:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    read = parse_jsonl(path.read_text(encoding="utf-8"))
    on_disk = {t.request_id for t in read.traces}
    assert announced <= on_disk, announced - on_disk  # every finished trace was written
    assert read.bad == [] and read.torn <= 1
    assert all(t.outcome == "ok" for t in read.traces)
    print(  # the figures for the closing note
        f"\nkill test: traces announced {len(announced)}, on disk {len(on_disk)},"
        f" read back {len(load_jsonl(path))}, torn lines {read.torn}"
    )


def test_a_torn_last_line_is_skipped_counted_and_said(tmp_path: Path, caplog: object) -> None:
    path = tmp_path / "t.jsonl"
    whole = '{"schema": "fairstream.trace/1", "request_id": "a", "end": 1.0}\n'
    path.write_text(whole * 2 + whole[:30], encoding="utf-8")
    assert [t.request_id for t in load_jsonl(path)] == ["a", "a"]
    assert "torn last line" in caplog.text  # type: ignore[attr-defined]
    tf = read_traces(path)
    assert (len(tf.traces), tf.torn, tf.skipped) == (2, 1, 0)
    path.write_text(whole + whole[:30] + "\n" + whole, encoding="utf-8")  # torn, then more
    try:
        load_jsonl(path)
    except ValueError as exc:
        assert ":2:" in str(exc)  # a bad line in the middle is an error, with its number
    else:
        raise AssertionError("a bad middle line must raise")


def test_analyze_says_it_skipped_a_torn_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fairstream._cli import cli

    path = tmp_path / "t.jsonl"
    whole = '{"schema": "fairstream.trace/1", "request_id": "a", "end": 1.0}\n'
    path.write_text(whole * 3 + whole[:30], encoding="utf-8")
    result = CliRunner().invoke(cli, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert "skipped 1 torn last line" in result.stderr
    assert '"skipped_lines"' in result.stdout
