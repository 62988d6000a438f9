"""One run's figures, read from its traces, in model seconds (the server's time scale undone)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from fairstream import StreamTrace

from ._cells import Job


@dataclass(frozen=True)
class Figures:
    """What one arm did in one run: the judged figures and what explains them."""

    makespan: float  # first submission to last chunk
    e2e_p50: float  # from submission: time in a dispatcher's queue counts
    short_p50: float  # requests of the workload's median length or less
    long_p50: float  # the longer ones (nan when none)
    ttft_p50: float  # from send
    good4: float  # output tokens/s of requests whose first token came within 4 steps of send
    errors: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def figures(
    traces: Sequence[StreamTrace], jobs: Sequence[Job], step: float, scale: float
) -> Figures:
    """``traces`` of ``jobs`` read as figures; ``step`` is the server's decode step, model s."""
    ok = [t for t in traces if t.outcome == "ok" and t.end is not None]
    nan = float("nan")
    if not ok:
        return Figures(nan, nan, nan, nan, nan, 0.0, len(jobs))
    starts = [t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in ok]
    span = max(t.end or 0.0 for t in ok) - min(starts)
    cut = statistics.median(j.max_tokens for j in jobs)
    e2e = [(t.end or 0.0) - s for t, s in zip(ok, starts, strict=True)]
    short = [e for e, t in zip(e2e, ok, strict=True) if (t.max_tokens or 0) <= cut]
    long = [e for e, t in zip(e2e, ok, strict=True) if (t.max_tokens or 0) > cut]
    ttft = [t.ttft for t in ok if t.ttft is not None]
    slo = 4 * step * scale
    good = sum(t.output_tokens for t in ok if t.ttft is not None and t.ttft <= slo)

    def p50(values: list[float]) -> float:
        return statistics.median(values) / scale if values else nan

    return Figures(
        makespan=span / scale,
        e2e_p50=p50(e2e),
        short_p50=p50(short),
        long_p50=p50(long),
        ttft_p50=p50(ttft),
        good4=good / (span / scale) if span > 0 else 0.0,
        errors=len(jobs) - len(ok),
    )
