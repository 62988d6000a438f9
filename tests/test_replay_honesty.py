"""``replay`` on traces a starved client recorded: an answer whose interval holds the truth, or a
refusal. Never a confident answer outside its own interval.

Each case records a mixed burst over real HTTP while the client's event loop is starved (a
task that blocks the loop at random with a synchronous call, lightly or most of the time, as
an app doing blocking work on its loop does) against a reference server in its own process.
The blocks sleep rather than spin: client and server share this machine's two cores here, and
a spinning client would slow the server too, which no client-side correction can or should
undo (in production the server has its own machine). The truth is the
same burst sent through the same policy (``auto``, the default what-if) by a client that is not
starved, on a fresh server of the same configuration: replay models the server, and a busy
client's delays are what it must see through (or refuse over).
"""

from __future__ import annotations

import statistics

import pytest

from fairstream import ReplayRefused, ServerConfig, replay
from fairstream._cli._bench._workload import make_workload

from ._starve import record, submission_figures, through

SERVERS = {
    "static-4": ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.5),
    "continuous-8": ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    "sequential": ServerConfig(mode="sequential", time_scale=0.25),
}


@pytest.mark.slow
@pytest.mark.alone  # real timings against the replay's tolerance: not beside other load
@pytest.mark.parametrize(("how", "seed"), [("light", 1), ("heavy", 2)])
@pytest.mark.parametrize("kind", sorted(SERVERS))
async def test_starved_traces_get_an_honest_answer_or_a_refusal(
    kind: str, how: str, seed: int
) -> None:
    cfg = SERVERS[kind]
    specs = make_workload(12, "mix:8,64", "16", seed=seed + 10 * sorted(SERVERS).index(kind))
    starved = await record(cfg, specs, how, seed)
    assert all(t.outcome == "ok" for t in starved)
    try:
        answer = replay(starved, "auto")
    except ReplayRefused as refusal:  # an honest outcome: it names what it lacks
        assert refusal.reasons and "fairstream probe" in str(refusal)
        return
    truth_run = await through(cfg, specs, "auto")
    assert all(t.outcome == "ok" for t in truth_run)
    cut = statistics.median(r.output_tokens for r in answer.fit.requests)
    for name, truth in submission_figures(truth_run, cut).items():
        low, high = answer.intervals[name]
        assert low <= truth <= high, (name, truth, answer.intervals, answer.check.to_dict())
