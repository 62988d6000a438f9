"""The active probe against the reference server over loopback, for every behaviour."""

from __future__ import annotations

import pytest

from fairstream import Auto, Recorder, ReferenceServer, probe

from ._modes import MODES, answer, config, decode_step_range

# each mode on both presets and both chunkings, in two of the four pairings (suite time)
CASES = [
    (mode, preset, tpc) for mode in MODES for preset, tpc in (("default-7b", 1), ("ascend-7b", 3))
]


@pytest.mark.parametrize(("mode", "preset", "tpc"), CASES)
async def test_probe_tells_the_mode(mode: str, preset: str, tpc: int) -> None:
    cfg = config(mode, preset, tpc)
    recorder = Recorder()
    # the server on its own loop (a thread): on the test's loop the client's chunk handling
    # delayed its steps, and a busy CI host stretched admissions into false prefill stalls (a
    # subprocess per case cured that too, but its CPU slowed the other worker's timing tests)
    with ReferenceServer.in_thread(cfg) as server:
        report = await probe(server.base_url, cfg.model, recorder=recorder)
    assert answer(report.verdict, report.release, report.prefill_stalls) == mode, report.evidence
    assert report.confidence >= Auto().confidence  # sure enough for ``auto`` to act on it
    sent = recorder.traces
    assert len(sent) <= 32 and all((t.max_tokens or 0) <= 64 for t in sent)
    if mode.startswith("static"):
        assert report.batch_size is not None and abs(report.batch_size - cfg.batch_size) <= 1
    if mode == "sequential":
        assert report.batch_size == 1
    lo, hi = decode_step_range(cfg)
    assert report.step_ms is not None
    assert 0.8 * lo <= report.step_ms / 1e3 <= 1.2 * hi, (report.step_ms, lo, hi)


@pytest.mark.parametrize("mode", ["static/batch_end", "continuous", "sequential"])
async def test_probe_works_when_the_server_ignores_ignore_eos(mode: str) -> None:
    # lengths drawn by the server (mean 24 tokens), whatever the probe asked for
    cfg = config(mode, "default-7b", 1, honor_ignore_eos=False, output_mean=24.0)
    recorder = Recorder()
    async with ReferenceServer(cfg) as server:
        report = await probe(server.base_url, cfg.model, recorder=recorder)
    lengths = {t.usage.completion_tokens for t in recorder.traces}
    assert any(t.usage.completion_tokens != t.max_tokens for t in recorder.traces), lengths
    assert answer(report.verdict, report.release, report.prefill_stalls) == mode


async def test_probe_finds_a_continuous_servers_slot_cap() -> None:
    cfg = config("continuous", "default-7b", 1, max_num_seqs=3)
    async with ReferenceServer(cfg) as server:
        report = await probe(server.base_url, cfg.model)
    assert report.verdict == "continuous"
    assert report.batch_size == 3 and report.batch_size_exact


async def test_probe_rejects_a_budget_too_small_to_decide() -> None:
    with pytest.raises(ValueError, match="budget"):
        await probe("http://127.0.0.1:9/v1", "m", budget=4)
