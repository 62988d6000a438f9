"""Continuous batching, prefill priority, KV preemption and sequential service, exactly."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairstream.server import ContinuousEngine, CostModel, StepStarted
from fairstream.sim import SimRequest, simulate

STEP = 0.010
FLAT = CostModel(step_ms=10.0, per_seq_ms=0.0, prefill_ms_per_token=0.0)


def test_each_request_ends_at_its_own_first_token_plus_its_tokens_times_the_step() -> None:
    run = simulate(ContinuousEngine(FLAT), [SimRequest(0, 16, n, f"n{n}") for n in (4, 8, 32, 64)])
    for r in run.results:
        assert r.first_token == pytest.approx(STEP)  # one prefill step
        assert r.end == pytest.approx(r.first_token + (r.output_tokens - 1) * STEP)
        assert r.hold == pytest.approx(0.0)
    ends = [r.end for r in sorted(run.results, key=lambda r: r.output_tokens)]
    assert ends == sorted(ends)


def test_newcomer_is_admitted_within_one_step_and_gets_its_token_at_that_step_end() -> None:
    run = simulate(
        ContinuousEngine(FLAT),
        [SimRequest(0.0, 16, 100, "long"), SimRequest(0.0234, 16, 3, "new")],
    )
    new = run.by_id()["new"]
    assert new.admitted is not None and 0 <= new.admitted - new.arrival <= STEP
    assert new.first_token == pytest.approx(new.admitted + STEP)
    assert new.end == pytest.approx(new.first_token + 2 * STEP)
    # the long request never paused: one token every step
    long = run.by_id()["long"]
    gaps = [b - a for a, b in zip(long.token_times, long.token_times[1:], strict=False)]
    assert max(gaps) == pytest.approx(STEP)


def test_finished_slot_is_reused_on_the_next_step() -> None:
    engine = ContinuousEngine(FLAT, max_num_seqs=2)
    run = simulate(
        engine, [SimRequest(0, 8, 3, "a"), SimRequest(0, 8, 50, "b"), SimRequest(0, 8, 2, "c")]
    )
    by = run.by_id()
    assert by["a"].end == pytest.approx(3 * STEP)
    assert by["c"].admitted == pytest.approx(3 * STEP)  # the step right after a left


def test_chunked_prefill_splits_a_long_prompt_over_steps_within_the_budget() -> None:
    cost = CostModel(step_ms=10.0, per_seq_ms=0.0, prefill_ms_per_token=0.01)
    engine = ContinuousEngine(cost, max_num_batched_tokens=100)
    run = simulate(engine, [SimRequest(0, 250, 2, "big")])
    prefills = [s.prefill_tokens for s in run.steps]
    assert prefills[:3] == [100, 100, 50]
    assert run.by_id()["big"].first_token == pytest.approx(sum(s.duration for s in run.steps[:3]))


def test_prefill_priority_stalls_running_decodes_for_exactly_the_prefill_steps() -> None:
    engine = ContinuousEngine(FLAT, prefill_priority=True)
    arrivals = [0.0425, 0.0825, 0.0831]  # the last two arrive within one step: one prefill step
    reqs = [SimRequest(0, 16, 40, "long")] + [
        SimRequest(t, 16, 2, f"n{i}") for i, t in enumerate(arrivals)
    ]
    run = simulate(engine, reqs)
    long = run.by_id()["long"]
    gaps = [
        round((b - a) / STEP) for a, b in zip(long.token_times, long.token_times[1:], strict=False)
    ]
    assert long.first_token is not None
    prefill_only = [
        s for s in run.steps if s.prefill_tokens and not s.decoding and s.t >= long.first_token
    ]
    assert len(prefill_only) == 2
    assert sum(g - 1 for g in gaps) == len(prefill_only)  # one missed token per prefill step
    # and the stall sits exactly where the newcomers got their first token
    stall_ends = [
        b
        for a, b in zip(long.token_times, long.token_times[1:], strict=False)
        if b - a > 1.5 * STEP
    ]
    first_tokens = sorted({run.by_id()[f"n{i}"].first_token for i in range(3)})
    assert stall_ends == pytest.approx([t + STEP for t in first_tokens])


def test_without_prefill_priority_steps_mix_prefill_and_decode() -> None:
    run = simulate(
        ContinuousEngine(FLAT, prefill_priority=False),
        [SimRequest(0, 16, 40, "long"), SimRequest(0.0425, 16, 2, "new")],
    )
    assert any(s.prefill_tokens and s.decoding for s in run.steps)


def test_kv_budget_preempts_the_newest_by_recompute_and_loses_no_token() -> None:
    engine = ContinuousEngine(FLAT, kv_tokens=60, max_num_seqs=4)
    run = simulate(engine, [SimRequest(0, 10, 30, f"k{i}") for i in range(3)])
    by = run.by_id()
    assert engine.stats.preemptions >= 1
    assert by["k0"].preemptions == 0  # the oldest is never the victim
    assert by["k2"].preemptions >= 1
    for r in run.results:
        assert len(r.token_times) == 30
        assert r.token_times == sorted(r.token_times)
    # a recomputed victim resumes after the sequences ahead of it
    assert by["k2"].end >= by["k0"].end


def test_sequential_mode_never_overlaps_generation() -> None:
    run = simulate(ContinuousEngine(FLAT, max_num_seqs=1), [SimRequest(0, 8, n) for n in (5, 3, 7)])
    spans = sorted((r.admitted, r.end) for r in run.results)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start is not None and end is not None and start >= end


workloads = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=0.5),
        st.integers(min_value=1, max_value=400),
        st.integers(min_value=1, max_value=40),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(
    workloads,
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=16, max_value=512),
    st.booleans(),
    st.booleans(),
    st.one_of(st.none(), st.integers(min_value=450, max_value=2000)),
)
def test_limits_are_never_exceeded_and_every_token_arrives(
    work: list[tuple[float, int, int]],
    max_seqs: int,
    budget: int,
    chunked: bool,
    prefill_priority: bool,
    kv: int | None,
) -> None:
    if not chunked:  # the whole sequence must fit one step (recompute after preemption)
        work = [(t, max(1, min(p, budget - o)), min(o, budget - 1)) for t, p, o in work]
    cost = CostModel(step_ms=10.0, per_seq_ms=0.3, prefill_ms_per_token=0.08)
    engine = ContinuousEngine(
        cost,
        max_num_seqs=max_seqs,
        max_num_batched_tokens=budget,
        chunked_prefill=chunked,
        prefill_priority=prefill_priority,
        kv_tokens=kv,
    )
    run = simulate(engine, [SimRequest(t, p, o) for t, p, o in work])
    for step in run.steps:
        assert isinstance(step, StepStarted)
        assert step.seqs <= max_seqs
        assert step.prefill_tokens + step.decoding <= budget
    for r in run.results:
        assert len(r.token_times) == r.output_tokens
        assert r.end == r.content_end
        assert r.first_token is not None and r.first_token > r.arrival
    starts = [s.t for s in run.steps]
    assert starts == sorted(starts)
    for a, b in zip(run.steps, run.steps[1:], strict=False):
        assert b.t >= a.t + a.duration - 1e-12  # steps never overlap
