"""Too little evidence must give ``unknown``, never a confident guess, and never a crash."""

from __future__ import annotations

import json

import pytest

from fairstream import REPORT_SCHEMA, ReferenceServer, StreamClient, StreamTrace, analyze

from ._modes import config

KEYS = {
    "schema",
    "verdict",
    "release",
    "synchronized_completion",
    "prefill_stalls",
    "batch_size",
    "step_ms",
    "confidence",
    "requests",
    "evidence",
    "recommendation",
}


def test_nothing_and_one_request_are_unknown() -> None:
    assert analyze([]).verdict == "unknown"
    one = StreamTrace(request_id="1", sent=0.0, first_content=0.1, last_content=0.5, end=0.5)
    report = analyze([one])
    assert report.verdict == "unknown" and report.confidence == 0.0
    assert report.recommendation.policy == "auto"


@pytest.mark.parametrize("mode", ["static/batch_end", "continuous"])
async def test_requests_one_after_another_are_unknown(mode: str) -> None:
    cfg = config(mode, "default-7b", 1)
    async with ReferenceServer(cfg) as server, StreamClient(server.base_url) as client:
        traces = [
            await client.complete(
                model=cfg.model, messages=[{"role": "user", "content": "x"}], max_tokens=6
            )
            for _ in range(6)
        ]
    report = analyze(traces)
    assert report.verdict == "unknown"
    assert "in flight" in next(e.detail for e in report.evidence if e.signal == "overlap")


async def test_missing_usage_is_counted_from_chunks() -> None:
    cfg = config("static/batch_end", "default-7b", 1)
    async with ReferenceServer(cfg) as server, StreamClient(server.base_url) as client:
        import anyio

        traces: list[StreamTrace] = []

        async def one(n: int) -> None:
            traces.append(
                await client.complete(
                    model=cfg.model,
                    messages=[{"role": "user", "content": "x"}],
                    max_tokens=n,
                    ignore_eos=True,
                    include_usage=False,
                )
            )

        async with anyio.create_task_group() as tg:
            for n in (4, 30, 8, 24, 4, 30, 8, 24, 12, 16):
                tg.start_soon(one, n)
    assert all(t.usage.estimated for t in traces)
    report = analyze(traces)
    assert report.verdict == "static" and report.release == "batch_end"


def test_failed_traces_are_left_out_and_said() -> None:
    bad = StreamTrace(request_id="x", sent=0.0, end=1.0, outcome="error")
    report = analyze([bad, bad])
    assert report.verdict == "unknown"
    assert {e.signal: e.value for e in report.evidence}["dropped"] == 2


def test_report_json_is_the_documented_contract() -> None:
    one = StreamTrace(request_id="1", sent=0.0, first_content=0.1, last_content=0.5, end=0.5)
    data = json.loads(json.dumps(analyze([one]).to_dict()))
    assert set(data) == KEYS and data["schema"] == REPORT_SCHEMA
    assert set(data["recommendation"]) == {"policy", "concurrency"}
    assert all(set(e) == {"signal", "value", "detail"} for e in data["evidence"])
    assert 0.0 <= data["confidence"] <= 1.0


def test_one_chunk_answers_trickling_in_are_not_one_at_a_time() -> None:
    """Eight one-token answers sent together reach the client a few ms apart (its own sending):
    each one's end is its first chunk, which is no request waiting behind another. (Auto read
    such a burst's head as a sequential server and dropped its limit to 1 on a 64-slot one.)"""
    traces = [
        StreamTrace(
            request_id=str(i),
            sent=0.001 * i,
            first_chunk=0.030 + 0.006 * i,
            first_content=0.030 + 0.006 * i,
            last_content=0.030 + 0.006 * i,
            end=0.031 + 0.006 * i,
            chunk_times=(0.030 + 0.006 * i,),
            chunk_tokens=(1,),
            chunk_chars=(1,),
            finish_reason="length",
        )
        for i in range(8)
    ]
    assert analyze(traces).verdict != "sequential"
