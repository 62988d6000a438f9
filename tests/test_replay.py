"""``fairstream replay``: fit a server model to recorded traffic, replay it as sent and through
a dispatcher policy. Traces are recorded over real HTTP from reference servers whose
configuration the test knows; the replay must recover that behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairstream import ReferenceServer, ServerConfig
from fairstream._cli import cli
from fairstream._cli._replay import REFUSED_EXIT

from .detect.test_summaries import SEED_LINES, SEED_TABLE


def _bench(cfg: ServerConfig, out: Path) -> Path:
    """20 requests at once, half 8 and half 64 tokens, by ``fairstream bench --out`` against
    the server in its own process: the JSONL file a user would replay."""
    with ReferenceServer.in_subprocess(cfg) as server:
        args = ["bench", "--base-url", server.base_url, "--model", cfg.model, "--requests", "20",
                "--output-tokens", "mix:8,64", "--seed", "3", "--out", str(out)]  # fmt: skip
        done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    return out / "traces.jsonl"


def _replay(*args: str, refusable: bool = False) -> dict[str, Any]:
    out = CliRunner().invoke(cli, ["replay", *args, "--json"])
    assert out.exit_code in ((0, REFUSED_EXIT) if refusable else (0,)), out.output
    result: dict[str, Any] = json.loads(out.stdout)
    assert result.get("refused", False) == (out.exit_code == REFUSED_EXIT)
    return result


@pytest.mark.parametrize(
    "cfg",
    [
        ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.5),
        ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    ],
    ids=["static-4", "continuous-8"],
)
def test_replay_recovers_a_known_server(cfg: ServerConfig, tmp_path: Path) -> None:
    """The fitted model is the server's kind (and batch size), and replaying the requests as
    they were sent reproduces the observed makespan and p50s within the stated tolerance; or,
    when a loaded client bent the traces past what the fit can reproduce, replay refuses and
    says why."""
    got = _replay(str(_bench(cfg, tmp_path / "run")), refusable=True)
    if got.get("refused"):
        assert got["reasons"] and got["self_check"] and "probe" in got["suggestion"]
        return
    kinds = {"continuous": {"continuous", "prefill-stalls"}}.get(cfg.mode, {cfg.mode})
    assert got["model"]["kind"] in kinds  # (prefill stalls are continuous batching too)
    if cfg.mode == "static":
        assert got["model"]["batch_size"] == 4
    assert got["after"]["makespan"] > 0 and got["after"]["short_p50"] > 0  # replayed through auto
    check = got["self_check"]
    assert all(abs(f["error"]) <= f["tolerance"] for f in check.values()), check
    low, high = got["intervals"]["makespan"]
    assert low <= got["after"]["makespan"] <= high  # the answer lies in its own interval


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
    assert got["fit"]["notes"]
    low, high = got["intervals"]["makespan_ratio"]  # the uncertainty, stated
    assert low < 1.0 < high and high - low > 0.2
    serial = _replay(str(path), "--policy", "serial")  # one at a time: much slower here
    assert serial["after"]["makespan"] > 2 * serial["before"]["makespan"]
    table = tmp_path / "table.md"  # the seed's table: TTFT and total time, no token counts
    table.write_text("\n".join(SEED_TABLE) + "\n", encoding="utf-8")
    text = CliRunner().invoke(cli, ["replay", str(table)])
    assert text.exit_code == 0 and "no token counts" in text.output, text.output


def test_replay_says_clearly_what_it_cannot_use(tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_text("nothing here\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["replay", str(path)])
    assert out.exit_code == REFUSED_EXIT and "need at least 2 finished requests" in out.output
    assert "fairstream probe" in out.output
    out = CliRunner().invoke(cli, ["replay", str(path), "--policy", "nonsense"])
    assert out.exit_code == 1 and "unknown policy" in out.output
