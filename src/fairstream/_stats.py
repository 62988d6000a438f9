"""``summarize(traces)``: p50/p90/p99 of the stream metrics, overall and per label."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._trace import StreamTrace

__all__ = ["Percentiles", "Summary", "summarize"]


@dataclass(frozen=True, slots=True)
class Percentiles:
    """p50 / p90 / p99 and the mean of one metric (seconds unless named otherwise)."""

    n: int
    mean: float
    p50: float
    p90: float
    p99: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles | None:
        if not values:
            return None
        if len(values) == 1:
            v = float(values[0])
            return cls(1, v, v, v, v)
        q = statistics.quantiles(values, n=100, method="inclusive")
        return cls(len(values), statistics.fmean(values), q[49], q[89], q[98])


@dataclass(frozen=True, slots=True)
class Summary:
    """Aggregate figures of a set of traces."""

    requests: int
    ok: int
    errors: int
    cancelled: int
    duration: float
    output_tokens: int
    output_tokens_per_second: float
    requests_per_second: float
    ttft: Percentiles | None
    ttfc: Percentiles | None
    tpot: Percentiles | None
    itl: Percentiles | None
    e2e: Percentiles | None
    hold: Percentiles | None
    queue_time: Percentiles | None
    tokens_estimated: bool
    by_label: dict[str, Summary] = field(default_factory=dict)


def summarize(traces: Iterable[StreamTrace], *, per_label: bool = True) -> Summary:
    """Percentiles of TTFT, TTFC, TPOT, ITL, E2E, hold and queue time, and throughput.

    Latency percentiles use successful requests only; throughput is output tokens over
    the span from the first request sent to the last stream end.
    """
    items = list(traces)
    ok = [t for t in items if t.outcome == "ok"]
    starts = [t.sent for t in items if t.sent is not None]
    ends = [t.end for t in items if t.end is not None]
    duration = max(ends) - min(starts) if starts and ends else 0.0
    tokens = sum(t.output_tokens for t in ok)

    def pick(values: Iterable[float | None]) -> Percentiles | None:
        return Percentiles.of([v for v in values if v is not None])

    by_label: dict[str, Summary] = {}
    if per_label:
        labels = sorted({t.label for t in items if t.label is not None})
        if len(labels) > 1 or (labels and any(t.label is None for t in items)):
            for label in labels:
                by_label[label] = summarize([t for t in items if t.label == label], per_label=False)
    return Summary(
        requests=len(items),
        ok=len(ok),
        errors=sum(t.outcome == "error" for t in items),
        cancelled=sum(t.outcome == "cancelled" for t in items),
        duration=duration,
        output_tokens=tokens,
        output_tokens_per_second=tokens / duration if duration > 0 else 0.0,
        requests_per_second=len(ok) / duration if duration > 0 else 0.0,
        ttft=pick(t.ttft for t in ok),
        ttfc=pick(t.ttfc for t in ok),
        tpot=pick(t.tpot for t in ok),
        itl=Percentiles.of([g for t in ok for g in t.itl]),
        e2e=pick(t.e2e for t in ok),
        hold=pick(t.hold for t in ok),
        queue_time=pick(t.queue_time for t in ok),
        tokens_estimated=any(t.usage.estimated for t in ok),
        by_label=by_label,
    )
