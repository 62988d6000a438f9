"""OpenTelemetry spans from finished traces (GenAI semantic conventions), for ``OtelSink``.

One CLIENT span per request, named ``chat {model}``, from the moment the call was made (its
queue time included) to its end, a child of whatever span was current where the call was
made: the recorder tells the sink when a request starts, in the caller's own context (a call
routed through a dispatcher starts its trace in the caller's task, after its wait). The queue
time is a child span of its own, ``fairstream.queue``; the first content chunk is a span event
``gen_ai.first_token``. Times come from the trace, so the span shows what the stream did, not
when the sink ran.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._builder import TraceBuilder
    from ._trace import StreamTrace

__all__ = ["SpanWriter"]


class SpanWriter:
    """Keeps each request's parent context from its start and writes its span at its end."""

    def __init__(self, tracer_provider: Any, provider_name: str, keep_content: bool) -> None:
        from opentelemetry import context, trace

        provider = tracer_provider or trace.get_tracer_provider()
        self._tracer = provider.get_tracer("fairstream")
        self._current = context.get_current
        self._in_context = trace.set_span_in_context
        self._client, self._internal = trace.SpanKind.CLIENT, trace.SpanKind.INTERNAL
        self._status, self._error = trace.Status, trace.StatusCode.ERROR
        self.provider_name = provider_name
        self.keep_content = keep_content
        self._parents: dict[str, list[Any]] = {}  # request id -> contexts, oldest first

    def on_start(self, builder: TraceBuilder) -> None:
        self._parents.setdefault(builder.request_id, []).append(self._current())

    def write(self, trace: StreamTrace, common: dict[str, Any]) -> None:
        waiting = self._parents.get(trace.request_id)
        parent = waiting.pop(0) if waiting else None
        if waiting is not None and not waiting:
            del self._parents[trace.request_id]
        start = next((t for t in (trace.enqueued, trace.sent, trace.end) if t is not None), 0.0)
        name = f"chat {trace.model}" if trace.model else "chat"
        span = self._tracer.start_span(
            name,
            context=parent,
            kind=self._client,
            attributes={**common, **self._attributes(trace)},
            start_time=_ns(trace, start),
        )
        if trace.first_content is not None and trace.ttft is not None:
            span.add_event(
                "gen_ai.first_token",
                {"fairstream.ttft": trace.ttft},
                timestamp=_ns(trace, trace.first_content),
            )
        if trace.outcome != "ok":
            span.set_status(self._status(self._error, trace.error_message or trace.outcome))
        queue = trace.queue_time
        if queue and trace.enqueued is not None and trace.sent is not None:
            self._tracer.start_span(
                "fairstream.queue",
                context=self._in_context(span),
                kind=self._internal,
                attributes={"fairstream.request_id": trace.request_id},
                start_time=_ns(trace, trace.enqueued),
            ).end(end_time=_ns(trace, trace.sent))
        span.end(end_time=_ns(trace, trace.end if trace.end is not None else start))

    def _attributes(self, trace: StreamTrace) -> dict[str, Any]:
        found: dict[str, Any] = {
            "gen_ai.request.max_tokens": trace.max_tokens,
            "gen_ai.response.id": trace.response_id,
            "gen_ai.response.model": trace.response_model,
            "gen_ai.usage.input_tokens": trace.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": trace.usage.completion_tokens,
            "gen_ai.response.time_to_first_chunk": trace.ttfc,
            "fairstream.request_id": trace.request_id,
            "fairstream.label": trace.label,
            "fairstream.outcome": trace.outcome,
            "fairstream.queue_time": trace.queue_time,
        }
        if trace.finish_reason:
            found["gen_ai.response.finish_reasons"] = [trace.finish_reason]
        if self.keep_content and trace.content is not None:
            message = {
                "role": "assistant",
                "parts": [{"type": "text", "content": trace.content}],
                "finish_reason": trace.finish_reason or "",
            }
            found["gen_ai.output.messages"] = json.dumps([message], ensure_ascii=False)
        return {k: v for k, v in found.items() if v is not None}


def _ns(trace: StreamTrace, t: float) -> int:
    """A time on the trace's clock as Unix nanoseconds."""
    return round((trace.wall_anchor + t) * 1e9)
