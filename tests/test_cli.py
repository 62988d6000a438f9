"""``fairstream serve`` as a newcomer runs it, and the off-loop runners built on it."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from click.testing import CliRunner

from fairstream import ReferenceServer, ServerConfig
from fairstream._cli import cli

BODY = {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}


def test_serve_prints_one_listening_line_and_serves() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fairstream",
            "serve",
            "--mode",
            "static",
            "--batch-size",
            "2",
            "--port",
            "0",
            "--model",
            "m1",
            "--time-scale",
            "0.2",
            "--batch-timeout-ms",
            "1",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        assert line.endswith("/v1")
        base = line.split()[-1]
        port = int(base.rsplit(":", 1)[1].split("/")[0])
        assert port > 0
        resp = httpx.post(base + "/chat/completions", json=BODY, timeout=10)
        assert resp.status_code == 200
        assert resp.json()["model"] == "m1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize(
    "args",
    [["--mode", "bogus"], ["--preset", "nope"], ["--time-scale", "0"], ["--batch-size", "x"]],
)
def test_bad_flags_are_usage_errors(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["serve", *args])
    assert result.exit_code == 2
    assert "Error" in result.output


def test_every_config_field_round_trips_through_the_flags() -> None:
    cfg = ServerConfig(
        mode="static",
        release="stream",
        batch_size=3,
        prefill_priority=True,
        kv_tokens=999,
        preset="ascend-7b",
        step_ms=7.5,
        time_scale=0.25,
        api_key="k",
        chunked_prefill=False,
        output_distribution="uniform",
        tokens_per_chunk=2,
    )
    seen: dict[str, object] = {}

    def capture(config: ServerConfig) -> None:
        seen["config"] = config

    import fairstream._cli._serve as cli_mod

    original = cli_mod._run_server
    cli_mod._run_server = capture  # type: ignore[assignment]
    try:
        result = CliRunner().invoke(cli, ["serve", *cfg.to_args()])
    finally:
        cli_mod._run_server = original
    assert result.exit_code == 0, result.output
    assert seen["config"] == cfg


def test_in_thread_and_in_subprocess_serve_off_the_callers_loop() -> None:
    with ReferenceServer.in_thread(model="m1", time_scale=0.2) as handle:
        assert (
            httpx.post(handle.base_url + "/chat/completions", json=BODY, timeout=10).status_code
            == 200
        )
    with ReferenceServer.in_subprocess(ServerConfig(model="m1", time_scale=0.2)) as handle:
        assert handle.pid is not None
        assert (
            httpx.post(handle.base_url + "/chat/completions", json=BODY, timeout=10).status_code
            == 200
        )
