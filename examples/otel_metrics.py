"""Export the client-side GenAI metrics to OpenTelemetry (needs the otel extra).

    python examples/otel_metrics.py [http://HOST:PORT/v1]

Every instrumented request records gen_ai.client.operation.duration, ...time_to_first_chunk,
...time_per_output_chunk and gen_ai.client.token.usage. Here an in-memory reader collects them
and the histograms are printed; in an app, give `OtelSink` your own MeterProvider (with an OTLP
exporter) or let it use the global one.
"""

from __future__ import annotations

import asyncio
import sys

from openai import AsyncOpenAI
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import fairstream
from fairstream import OtelSink, Recorder, ReferenceServer, ServerConfig


async def run(base_url: str) -> None:
    reader = InMemoryMetricReader()
    recorder = Recorder([OtelSink(MeterProvider(metric_readers=[reader]))])
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=recorder)

        async def one(n: int) -> None:
            stream = await client.chat.completions.create(
                model="fairstream-ref",
                messages=[{"role": "user", "content": "hi"}],
                max_tokens=n,
                stream=True,
            )
            async for _chunk in stream:
                pass

        await asyncio.gather(*(one(n) for n in (4, 8, 16, 32)))
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    attrs = dict(point.attributes or {})
                    print(
                        f"{metric.name} [{metric.unit}]: count={point.count} sum={point.sum:.4f}"
                        f" model={attrs.get('gen_ai.request.model')}"
                        f" token.type={attrs.get('gen_ai.token.type', '-')}"
                    )


async def main() -> None:
    if len(sys.argv) > 1:
        await run(sys.argv[1])
        return
    async with ReferenceServer(ServerConfig(time_scale=0.2)) as server:
        await run(server.base_url)


if __name__ == "__main__":
    asyncio.run(main())
