"""The parts of ``replay`` that keep it honest, as pure functions on virtual-time traces: the
stall correction, the refusal over a stalled recording, and the self-check."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fairstream import ReplayRefused, ServerConfig, StreamTrace, replay
from fairstream._replay._check import TOLERANCE, self_check
from fairstream._replay._declump import declump
from fairstream._replay._fit import observed_requests
from fairstream.sim import SimRequest, simulate

CONFIG = ServerConfig(mode="continuous", max_num_seqs=8)


def _traces(n: int = 12) -> list[StreamTrace]:
    """A mixed burst on a continuous server, every chunk stamped when it was emitted."""
    work = [SimRequest(0.0, 16, 8 if i % 2 else 64, rid=f"r{i}") for i in range(n)]
    return simulate(CONFIG.build_engine(), work).traces


def _stalled(traces: list[StreamTrace], stalls: list[tuple[float, float]]) -> list[StreamTrace]:
    """What a client whose loop was blocked over each (start, end) would have stamped: every
    time inside a stall read at its end, in order, a few microseconds apart."""

    def late(v: float) -> float:
        for a, b in stalls:
            if a < v < b:
                return b + (v - a) * 1e-4
        return v

    out = []
    for t in traces:
        fields = {
            f: late(v)
            for f in ("first_chunk", "first_content", "last_content", "finish_chunk", "end")
            if (v := getattr(t, f)) is not None
        }
        out.append(replace(t, chunk_times=tuple(map(late, t.chunk_times)), **fields))
    return out


def test_a_clean_recording_comes_back_unchanged() -> None:
    traces = _traces()
    got = declump(traces)
    assert got.stalls == [] and got.traces == traces


def test_chunks_read_in_one_clump_are_spread_back_over_the_stall() -> None:
    truth = _traces()
    stall = (0.30, 0.42)  # eight steps of the default 15 ms
    got = declump(_stalled(truth, [stall]))
    assert got.stalls == [pytest.approx(stall[1] - stall[0], abs=0.02)]
    before = after = 0.0
    for real, seen, fixed in zip(truth, _stalled(truth, [stall]), got.traces, strict=True):
        assert list(fixed.chunk_times) == sorted(fixed.chunk_times)  # order kept
        for r, s, f in zip(real.chunk_times, seen.chunk_times, fixed.chunk_times, strict=True):
            if s != r:  # read late: now inside the stall, and closer to when it came
                assert stall[0] - 0.02 <= f <= stall[1]
                before, after = before + abs(s - r), after + abs(f - r)
    assert after < 0.6 * before


def test_replay_refuses_a_recording_stalled_most_of_the_time() -> None:
    truth = _traces()
    span = max(t.end or 0.0 for t in truth)
    stalls = [(a, a + 0.1) for a in (x * 0.15 for x in range(1, 40)) if a + 0.1 < span]
    with pytest.raises(ReplayRefused) as refused:
        replay(_stalled(truth, stalls))
    assert "stalled" in str(refused.value) and "fairstream probe" in str(refused.value)


def test_the_self_check_fails_a_model_that_misses_the_recording() -> None:
    traces = _traces()
    requests = observed_requests(traces)
    run = simulate(CONFIG.build_engine(), [r.as_sent() for r in requests])
    assert self_check(run, requests, 8).ok  # the very engine reproduces its own traces
    slower = [replace(r, e2e=r.e2e * 2) for r in requests]
    check = self_check(run, slower, 8)
    assert set(check.failed) == set(TOLERANCE)
    assert all("observed" in reason for reason in check.reasons())
    assert check.to_dict()["makespan"]["error"] == pytest.approx(-0.5, abs=0.01)
