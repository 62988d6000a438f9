"""Static batching, exactly, in virtual time."""

from __future__ import annotations

import pytest

from fairstream.server import CostModel, SeqRequest, StaticEngine, Tokens
from fairstream.sim import SimRequest, simulate

STEP = 0.010  # 10 ms per step, nothing else
FLAT = CostModel(step_ms=10.0, per_seq_ms=0.0, prefill_ms_per_token=0.0)


def batch(lengths: list[int], at: float = 0.0, prefix: str = "r") -> list[SimRequest]:
    return [SimRequest(at, 16, n, f"{prefix}{i}") for i, n in enumerate(lengths)]


def test_batch_end_members_all_end_on_the_same_step_whatever_their_lengths() -> None:
    engine = StaticEngine(FLAT, batch_size=4, batch_timeout=0.0, release="batch_end")
    run = simulate(engine, batch([4, 8, 32, 64]))
    ends = {r.end for r in run.results}
    assert len(ends) == 1
    (end,) = ends
    # prefill step gives token 1, then 63 decode steps for the longest member
    assert end == pytest.approx(64 * STEP)
    by = run.by_id()
    # content ended at each member's own step, then the stream was held
    assert by["r0"].content_end == pytest.approx(4 * STEP)
    assert by["r0"].hold == pytest.approx(60 * STEP)
    assert by["r3"].hold == pytest.approx(0.0)
    assert [len(r.token_times) for r in run.results] == [4, 8, 32, 64]


def test_stream_release_ends_each_member_at_its_own_step_but_never_refills() -> None:
    engine = StaticEngine(FLAT, batch_size=4, batch_timeout=0.0, release="stream")
    reqs = [*batch([4, 8, 32, 64]), SimRequest(0.005, 16, 2, "late")]
    run = simulate(engine, reqs)
    by = run.by_id()
    for rid, n in (("r0", 4), ("r1", 8), ("r2", 32), ("r3", 64)):
        assert by[rid].end == pytest.approx(n * STEP)
        assert by[rid].hold == pytest.approx(0.0)
    # the newcomer arrived while slots were free (r0 done at 40 ms) yet waited for the batch
    assert by["late"].admitted == pytest.approx(64 * STEP)
    assert by["late"].first_token == pytest.approx(65 * STEP)


def test_gather_waits_for_the_timeout_or_a_full_batch() -> None:
    engine = StaticEngine(FLAT, batch_size=3, batch_timeout=0.050)
    run = simulate(engine, [SimRequest(0.0, 8, 2, "a"), SimRequest(0.020, 8, 2, "b")])
    by = run.by_id()
    assert by["a"].admitted == pytest.approx(0.050)  # timeout from the oldest arrival
    assert by["b"].admitted == pytest.approx(0.050)
    engine = StaticEngine(FLAT, batch_size=2, batch_timeout=1.0)
    run = simulate(engine, [SimRequest(0.0, 8, 2, "a"), SimRequest(0.020, 8, 2, "b")])
    assert run.by_id()["a"].admitted == pytest.approx(0.020)  # full batch starts at once


def test_batches_beyond_batch_size_form_waves() -> None:
    engine = StaticEngine(FLAT, batch_size=2, batch_timeout=0.0)
    run = simulate(engine, batch([3, 5, 2, 2]))
    by = run.by_id()
    assert by["r0"].end == by["r1"].end == pytest.approx(5 * STEP)
    assert by["r2"].admitted == pytest.approx(5 * STEP)
    assert by["r2"].end == by["r3"].end == pytest.approx(7 * STEP)


def test_padding_costs_every_slot_and_the_longest_prompt() -> None:
    cost = CostModel(step_ms=10.0, per_seq_ms=1.0, prefill_ms_per_token=0.1)
    engine = StaticEngine(cost, batch_size=4, batch_timeout=0.0)
    run = simulate(engine, [SimRequest(0, 100, 3, "a"), SimRequest(0, 10, 1, "b")])
    prefill, *decodes = run.steps
    assert prefill.prefill_tokens == 200  # 2 members x longest prompt
    assert prefill.duration == pytest.approx(0.010 + 0.0001 * 200)
    # b finished after prefill but keeps its slot: both decode steps cost for 2 sequences
    assert [s.decoding for s in decodes] == [2, 2]


def test_abort_stops_events_and_frees_the_waiting_queue() -> None:
    engine = StaticEngine(FLAT, batch_size=2, batch_timeout=0.0)
    engine.add(SeqRequest("a", 8, 50), 0.0)
    engine.add(SeqRequest("b", 8, 3), 0.0)
    engine.add(SeqRequest("c", 8, 3), 0.0)
    engine.advance(0.0)
    engine.abort("c", 0.001)  # waiting
    engine.abort("a", 0.001)  # in the batch: the batch now ends with b
    seen: list[str] = []
    t = 0.0
    while (wake := engine.next_wakeup()) is not None:
        t = max(t, wake)
        seen += [e.rid for e in engine.advance(t) if isinstance(e, Tokens)]
    assert set(seen) == {"b"}
    assert t == pytest.approx(3 * STEP)
    assert engine.stats.aborted == 2


def test_stretched_counts_requests_held_by_a_later_much_longer_batch_mate() -> None:
    """Arrival order matters: a short request joined by a later long one is stretched; one
    that joined a long one already there, or one within 2x (or 16 tokens), is not."""
    cases = [([4, 64, 8, 9], 1), ([64, 4, 8, 9], 0), ([4, 16, 30, 32], 0), ([4, 33, 40, 70], 2)]
    for lengths, stretched in cases:
        engine = StaticEngine(FLAT, batch_size=4, batch_timeout=0.0)
        simulate(engine, batch(lengths))  # all at once, in this order
        assert engine.stats.stretched == stretched, lengths
