"""OpenTelemetry client metrics and spans (GenAI semantic conventions), from finished traces.

Metrics: the client-side instruments ``gen_ai.client.operation.duration``,
``gen_ai.client.operation.time_to_first_chunk``, ``gen_ai.client.operation.time_per_output_chunk``
and ``gen_ai.client.token.usage``, with the conventions' advisory bucket boundaries.

Spans (``spans=True``, see :mod:`._spans`): one CLIENT span per request, a child of the span
current where the call was made, with its queue time as a child span ``fairstream.queue``.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._errors import require
from ._redact import capture_content
from ._trace import StreamTrace

if TYPE_CHECKING:
    from ._builder import TraceBuilder
    from ._spans import SpanWriter

__all__ = ["OtelSink"]

_DURATION_BUCKETS = [
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
]
_CHUNK_BUCKETS = [
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
]
_TOKEN_BUCKETS = [
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
]


_INSTRUMENTS: list[tuple[str, str, str, list[float] | list[int]]] = [
    ("gen_ai.client.operation.duration", "s", "GenAI operation duration", _DURATION_BUCKETS),
    (
        "gen_ai.client.operation.time_to_first_chunk",
        "s",
        "Time to receive the first chunk of a streamed response",
        _CHUNK_BUCKETS,
    ),
    (
        "gen_ai.client.operation.time_per_output_chunk",
        "s",
        "Time between consecutive chunks of a streamed response",
        _CHUNK_BUCKETS,
    ),
    (
        "gen_ai.client.token.usage",
        "{token}",
        "Number of input and output tokens used",
        _TOKEN_BUCKETS,
    ),
]


class OtelSink:
    """Records each trace into OTel histograms (``meter_provider`` or the global one) and, with
    ``spans=True``, as a span (``tracer_provider`` or the global one). Prompt and answer text
    go on spans only with ``keep_content=True`` (and a recorder that keeps content)."""

    def __init__(
        self,
        meter_provider: Any = None,
        *,
        provider_name: str = "openai",
        spans: bool = False,
        tracer_provider: Any = None,
        keep_content: bool | None = None,
    ) -> None:
        try:
            from opentelemetry import metrics
        except ImportError:
            require("opentelemetry-api", "otel")
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("fairstream")
        self.provider_name = provider_name
        self.spans: SpanWriter | None = None
        if spans:
            from ._spans import SpanWriter

            self.spans = SpanWriter(tracer_provider, provider_name, capture_content(keep_content))
        self.duration, self.ttfc, self.per_chunk, self.tokens = (
            meter.create_histogram(
                name, unit=unit, description=text, explicit_bucket_boundaries_advisory=buckets
            )
            for name, unit, text, buckets in _INSTRUMENTS
        )

    def on_start(self, builder: TraceBuilder) -> None:
        """A request starts (the recorder calls this where the call is made)."""
        if self.spans is not None:
            self.spans.on_start(builder)

    def __call__(self, trace: StreamTrace) -> None:
        attrs = common_attributes(trace, self.provider_name)
        if self.spans is not None:
            self.spans.write(trace, attrs)
        if trace.e2e is not None:
            self.duration.record(trace.e2e, attrs)
        if trace.outcome == "ok":
            if trace.ttfc is not None:
                self.ttfc.record(trace.ttfc, attrs)
            times = trace.chunk_times
            for a, b in pairwise(times):
                self.per_chunk.record(b - a, attrs)
        u = trace.usage
        if u.prompt_tokens is not None:
            self.tokens.record(u.prompt_tokens, {**attrs, "gen_ai.token.type": "input"})
        if u.completion_tokens is not None:
            self.tokens.record(u.completion_tokens, {**attrs, "gen_ai.token.type": "output"})


def common_attributes(trace: StreamTrace, provider_name: str) -> dict[str, Any]:
    """The attributes metrics and spans share: operation, provider, model, server, error."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_name,
    }
    if trace.model:
        attrs["gen_ai.request.model"] = trace.model
    if trace.base_url:
        parts = urlsplit(trace.base_url)
        if parts.hostname:
            attrs["server.address"] = parts.hostname
        if parts.port:
            attrs["server.port"] = parts.port
    if trace.outcome != "ok":
        attrs["error.type"] = trace.error_type or trace.outcome
    return attrs
