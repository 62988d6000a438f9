"""Recorder sinks: JSONL round trip, failing sinks, summaries, OpenTelemetry."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from fairstream import (
    SCHEMA,
    JsonlSink,
    Recorder,
    StreamTrace,
    load_jsonl,
    summarize,
)
from tests.conftest import ServerFactory
from tests.instrument._families import FAMILIES, consume


@pytest.mark.parametrize("family", FAMILIES)
async def test_jsonl_round_trips(serve: ServerFactory, tmp_path: Path, family: str) -> None:
    path = tmp_path / "traces.jsonl"
    sink = JsonlSink(path)
    rec = Recorder([sink])
    async with serve() as server:
        await consume(family, server.base_url, rec, 5)
        await consume(family, server.base_url, rec, 3, usage=False)
    rec.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert all(json.loads(line)["schema"] == SCHEMA for line in lines)
    loaded = load_jsonl(path)
    assert loaded == rec.traces
    assert loaded[0].ttft == rec.traces[0].ttft
    assert "content" not in json.loads(lines[0])  # no text unless the user opts in


def test_jsonl_rejects_other_schemas_with_the_line_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps(StreamTrace(request_id="1").to_dict())
    path.write_text(good + "\n" + json.dumps({"schema": "other/9"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        load_jsonl(path)


async def test_a_failing_sink_never_breaks_the_stream(serve: ServerFactory) -> None:
    calls: list[str] = []

    def broken(trace: StreamTrace) -> None:
        raise RuntimeError("sink is down")

    rec = Recorder([broken, lambda t: calls.append(t.request_id)])
    async with serve() as server:
        pieces = await consume("openai", server.base_url, rec, 4)
    assert len(pieces) == 4
    assert rec.sink_failures == 1
    assert len(calls) == 1  # the sinks after the broken one still ran


async def test_keep_content_is_opt_in(serve: ServerFactory) -> None:
    rec = Recorder(keep_content=True)
    async with serve() as server:
        pieces = await consume("httpx", server.base_url, rec, 4)
    assert rec.traces[0].content == "".join(pieces)


async def test_summarize_matches_statistics_on_real_traces(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server:
        for n in (3, 5, 8, 13):
            await consume("httpx", server.base_url, rec, n)
    s = summarize(rec.traces)
    ttfts = [t.ttft for t in rec.traces if t.ttft is not None]
    assert s.requests == s.ok == 4
    assert s.ttft is not None and s.ttft.p50 == pytest.approx(statistics.median(ttfts))
    assert s.output_tokens == 3 + 5 + 8 + 13
    assert s.itl is not None and s.itl.n == 2 + 4 + 7 + 12
    assert s.output_tokens_per_second > 0


def test_summarize_per_label() -> None:
    traces = [
        StreamTrace(
            request_id=str(i),
            label="short" if i % 2 else "long",
            sent=0.0,
            first_content=0.1 * i,
            end=1.0 + i,
        )
        for i in range(6)
    ]
    s = summarize(traces)
    assert set(s.by_label) == {"short", "long"}
    assert s.by_label["short"].requests == 3
    assert s.by_label["short"].e2e is not None
    assert s.by_label["short"].e2e.p50 == pytest.approx(statistics.median([2.0, 4.0, 6.0]))


async def test_otel_metrics_reach_an_in_memory_reader(serve: ServerFactory) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from fairstream import OtelSink

    reader = InMemoryMetricReader()
    rec = Recorder([OtelSink(MeterProvider(metric_readers=[reader]))])
    async with serve() as server:
        await consume("openai", server.base_url, rec, 6)
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {
        m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
    }
    assert set(metrics) == {
        "gen_ai.client.operation.duration",
        "gen_ai.client.operation.time_to_first_chunk",
        "gen_ai.client.operation.time_per_output_chunk",
        "gen_ai.client.token.usage",
    }
    duration = metrics["gen_ai.client.operation.duration"].data.data_points[0]
    assert duration.count == 1
    assert duration.attributes["gen_ai.request.model"] == "fairstream-ref"
    assert duration.attributes["gen_ai.operation.name"] == "chat"
    assert duration.attributes["server.address"] == "127.0.0.1"
    tokens = metrics["gen_ai.client.token.usage"].data.data_points
    by_type = {p.attributes["gen_ai.token.type"]: p.sum for p in tokens}
    assert by_type["output"] == 6
