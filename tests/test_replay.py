"""``fairstream replay``: fit a server model to recorded traffic, replay it as sent and through
a dispatcher policy. Traces are recorded over real HTTP from reference servers whose
configuration the test knows; the replay must recover that behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairstream import JsonlSink, Recorder, ReferenceServer, ServerConfig
from fairstream._cli import cli
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import make_workload

from .detect.test_summaries import SEED_LINES


async def _record(cfg: ServerConfig, path: Path) -> None:
    """20 requests at once, half 8 and half 64 tokens, traced to JSONL as an app would."""
    rec = Recorder([JsonlSink(path)])
    async with ReferenceServer(cfg) as server:
        await run_workload(
            server.base_url, cfg.model, make_workload(20, "mix:8,64", "16", seed=3), recorder=rec
        )
    rec.close()


def _replay(*args: str) -> dict[str, Any]:
    out = CliRunner().invoke(cli, ["replay", *args, "--json"])
    assert out.exit_code == 0, out.output
    result: dict[str, Any] = json.loads(out.stdout)
    return result


@pytest.mark.parametrize(
    "cfg",
    [
        ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.5),
        ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    ],
    ids=["static-4", "continuous-8"],
)
async def test_replay_recovers_a_known_server(cfg: ServerConfig, tmp_path: Path) -> None:
    """The fitted model is the server's kind (and batch size), and replaying the requests as
    they were sent gives the observed makespan within 10%."""
    path = tmp_path / "traces.jsonl"
    await _record(cfg, path)
    got = _replay(str(path))
    assert got["model"]["kind"] == cfg.mode
    if cfg.mode == "static":
        assert got["model"]["batch_size"] == 4
    # through auto, on the fitted model: never worse than as sent (with a margin)
    assert got["after"]["short_p50"] <= 1.05 * got["before"]["short_p50"], got
    assert got["after"]["makespan"] <= 1.05 * got["before"]["makespan"], got
    assert abs(got["fit"]["makespan_error"]) <= 0.10, got["fit"]
    assert got["fit"]["e2e_error_median"] <= 0.25, got["fit"]


def test_replay_of_the_seeds_log_lines_answers_and_says_how_unsure(tmp_path: Path) -> None:
    """Four summary lines, all 8 tokens: nothing to reorder, so ``auto`` changes nothing; the
    output says the lines carry no chunk times and how far off the first tokens are."""
    path = tmp_path / "seed.log"
    path.write_text("\n".join(SEED_LINES) + "\n", encoding="utf-8")
    text = CliRunner().invoke(cli, ["replay", str(path), "--png", str(tmp_path / "t.png")])
    assert text.exit_code == 0, text.output
    assert "same length (8 tokens)" in text.output and "no chunk times" in text.output
    assert (tmp_path / "t.png").stat().st_size > 0
    got = _replay(str(path))
    assert got["fit"]["requests"] == 4 and not got["fit"]["chunk_times"]
    assert got["after"]["makespan"] == pytest.approx(got["before"]["makespan"], rel=0.05)
    assert got["fit"]["notes"] and got["ranges"]
    serial = _replay(str(path), "--policy", "serial")  # one at a time: much slower here
    assert serial["after"]["makespan"] > 2 * serial["before"]["makespan"]


def test_replay_says_clearly_what_it_cannot_use(tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_text("nothing here\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["replay", str(path)])
    assert out.exit_code == 1 and "need at least 2 finished requests" in out.output
    out = CliRunner().invoke(cli, ["replay", str(path), "--policy", "nonsense"])
    assert out.exit_code == 1 and "unknown policy" in out.output
