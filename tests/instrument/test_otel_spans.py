"""``OtelSink(spans=True)``: one CLIENT span per request (GenAI semantic conventions), a child
of the span current where the call was made, with its queue time as a child span; no text
unless asked. Real streams from the reference server through the openai SDK, spans caught by
the SDK's in-memory exporter."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from openai import AsyncOpenAI
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import fairstream
from fairstream import Dispatcher, OtelSink, Recorder
from tests.conftest import ServerFactory

MSG: Any = [{"role": "user", "content": "hi"}]


def _otel(**options: Any) -> tuple[TracerProvider, InMemorySpanExporter, OtelSink]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OtelSink(MeterProvider(), spans=True, tracer_provider=provider, **options)
    return provider, exporter, sink


async def _ask(client: AsyncOpenAI, tokens: int) -> None:
    stream = await client.chat.completions.create(
        model="fairstream-ref",
        messages=MSG,
        max_tokens=tokens,
        stream=True,
        extra_body={"ignore_eos": True},
    )
    async for _ in stream:
        pass


async def test_each_request_is_a_client_span_under_the_callers_span_queue_time_included(
    serve: ServerFactory,
) -> None:
    """Two calls through a dispatcher of one slot, inside the app's span: both spans are its
    children; the second waited for the slot, and its wait is a ``fairstream.queue`` child."""
    provider, exporter, sink = _otel()
    tracer = provider.get_tracer("app")
    rec = Recorder([sink])
    async with (
        serve() as server,
        AsyncOpenAI(base_url=server.base_url, api_key="k") as raw,
        Dispatcher("fixed:1") as d,
    ):
        client = fairstream.instrument(raw, recorder=rec, label="spans", dispatcher=d)
        with tracer.start_as_current_span("app") as app:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_ask, client, 12)
                tg.start_soon(_ask, client, 4)
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name == "chat fairstream-ref"]
    queues = {s.parent.span_id: s for s in spans if s.name == "fairstream.queue" and s.parent}
    assert len(chats) == 2 and len(spans) == 5  # the app, 2 requests, each with its queue
    app_id = app.get_span_context().span_id
    for span in chats:
        assert span.kind == SpanKind.CLIENT and span.parent is not None
        assert span.parent.span_id == app_id
        a = span.attributes or {}
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "openai"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "fairstream-ref"
        assert a["gen_ai.response.id"] and a["gen_ai.response.finish_reasons"] == ("length",)
        assert a["gen_ai.usage.output_tokens"] == a["gen_ai.request.max_tokens"]
        assert a["gen_ai.usage.input_tokens"] and a["fairstream.label"] == "spans"
        assert a["server.address"] == "127.0.0.1" and a["server.port"] == server.port
        assert "error.type" not in a
        assert not any(k.startswith("gen_ai.output") for k in a)  # no text unless asked
        [event] = span.events
        assert event.name == "gen_ai.first_token"
        assert span.start_time < (event.timestamp or 0) < (span.end_time or 0)
        queue = queues[span.context.span_id]  # its queue time: from its start to its send
        assert queue.start_time == span.start_time
        assert queue.end_time is not None and queue.start_time < queue.end_time < event.timestamp
    # one slot: the second request was sent only once the first one had ended
    first, second = sorted(chats, key=lambda s: s.end_time or 0)
    assert (queues[second.context.span_id].end_time or 0) >= (first.end_time or 0)


async def test_a_failed_request_is_an_error_span_and_text_only_when_asked(
    serve: ServerFactory,
) -> None:
    _, exporter, sink = _otel(keep_content=True)
    rec = Recorder([sink], keep_content=True)
    async with (
        serve(faults="status_503:at=2") as server,
        AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw,
    ):
        client = fairstream.instrument(raw, recorder=rec)
        await _ask(client, 3)
        with pytest.raises(Exception):  # noqa: B017 (the SDK's own 503 error)
            await _ask(client, 3)
    ok, failed = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    assert ok.parent is None  # no span was current: a root span
    assert '"content":' in str((ok.attributes or {})["gen_ai.output.messages"])
    assert failed.status.status_code == StatusCode.ERROR
    assert (failed.attributes or {})["error.type"] == rec.traces[1].error_type
    assert not failed.events  # no first token
