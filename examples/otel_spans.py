"""One OpenTelemetry span per request, under your app's own span (needs the otel extra).

    python examples/otel_spans.py [http://HOST:PORT/v1]

`OtelSink(spans=True)` writes a CLIENT span `chat {model}` per request (GenAI semantic
conventions: model, response id, finish reasons, token usage, server, error type), a child of
the span current where the call was made, with a `gen_ai.first_token` event and, for calls that
waited in a dispatcher's queue, a `fairstream.queue` child span. Here the console exporter
prints them; in an app, pass your TracerProvider (OTLP to Jaeger, Tempo, Langfuse, Phoenix...)
or let the sink use the global one.
"""

from __future__ import annotations

import asyncio
import sys

from openai import AsyncOpenAI
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

import fairstream
from fairstream import Dispatcher, OtelSink, Recorder, ReferenceServer, ServerConfig


async def run(base_url: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    recorder = Recorder([OtelSink(MeterProvider(), spans=True, tracer_provider=provider)])
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw, Dispatcher("fixed:2") as d:
        client = fairstream.instrument(raw, recorder=recorder, dispatcher=d)

        async def one(n: int) -> None:
            stream = await client.chat.completions.create(
                model="fairstream-ref",
                messages=[{"role": "user", "content": "hi"}],
                max_tokens=n,
                stream=True,
            )
            async for _chunk in stream:
                pass

        with provider.get_tracer("my-app").start_as_current_span("answer questions"):
            await asyncio.gather(*(one(n) for n in (4, 8, 16)))  # the third waits for a slot


async def main() -> None:
    if len(sys.argv) > 1:
        await run(sys.argv[1])
        return
    async with ReferenceServer(ServerConfig(time_scale=0.2)) as server:
        await run(server.base_url)


if __name__ == "__main__":
    asyncio.run(main())
