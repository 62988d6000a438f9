"""What-if replay: with my traffic, on my server, what would the dispatcher have saved?

:func:`replay` fits a server model to recorded traffic (:mod:`._fit`), replays the same
requests in virtual time on the reference engine as they were sent (so the fit can be checked
against what was observed) and then through a dispatcher policy, and compares the two: short
and long requests' E2E from submission, makespan, and the time finished answers were held
hostage. Where the file cannot pin the model down (summary lines, few requests, a batch size
that is only a lower bound), the comparison is repeated on nearby models and reported as a
range.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._dispatch._names import make_policy
from ..sim import SimRun, simulate
from ._fit import Fit, fit_server

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = ["Fit", "Replay", "Side", "fit_server", "replay"]


@dataclass(frozen=True, slots=True)
class Side:
    """One way of sending the requests: seconds, from each request's submission."""

    short_p50: float
    short_p99: float
    long_p50: float
    long_p99: float
    makespan: float
    hostage: float  # mean time a finished answer was held open (static batch_end servers)

    def to_dict(self) -> dict[str, float]:
        return {k: round(getattr(self, k), 4) for k in self.__dataclass_fields__}


@dataclass(slots=True)
class Replay:
    """The fit, the requests replayed as sent (before) and through ``policy`` (after)."""

    fit: Fit
    policy: str
    before: Side
    after: Side
    before_run: SimRun
    after_run: SimRun
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # after/before

    def to_dict(self) -> dict[str, Any]:
        fit = self.fit
        return {
            "schema": "fairstream.replay/1",
            "policy": self.policy,
            "model": {
                "kind": fit.kind,
                "description": fit.describe(),
                "batch_size": fit.config.batch_size if fit.kind == "static" else None,
                "step_ms": round(fit.step_ms, 4),
                "verdict": fit.report.verdict,
                "confidence": round(fit.report.confidence, 3),
            },
            "fit": {
                "requests": len(fit.requests),
                "e2e_error_median": round(fit.e2e_error, 4),
                "makespan_error": round(fit.makespan_error, 4),
                "ttft_error_median": None if fit.ttft_error is None else round(fit.ttft_error, 4),
                "chunk_times": fit.chunk_times,
                "alternatives": fit.alternatives,
                "notes": fit.notes,
            },
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "ranges": {k: [round(a, 4), round(b, 4)] for k, (a, b) in self.ranges.items()},
        }


def replay(traces: list[StreamTrace], policy: str = "auto", resolution: float = 0.0) -> Replay:
    """Fit, replay as sent and through ``policy`` (a name: ``auto``, ``waves:8``, ...)."""
    make_policy(policy)  # a bad name fails here, before any work
    fit = fit_server(traces, resolution)
    before_run, after_run = _both(fit, policy)
    threshold = statistics.median(r.output_tokens for r in fit.requests)
    out = Replay(
        fit,
        policy,
        _side(before_run, threshold),
        _side(after_run, threshold),
        before_run,
        after_run,
    )
    if fit.notes:  # the file leaves the model loose: the same comparison on nearby models
        out.ranges = _ranges(fit, policy, threshold)
    return out


def _both(fit: Fit, policy: str) -> tuple[SimRun, SimRun]:
    before = simulate(fit.config.build_engine(), [r.as_sent() for r in fit.requests])
    after = simulate(
        fit.config.build_engine(),
        [r.as_submitted() for r in fit.requests],
        policy=make_policy(policy),
    )
    return before, after


def _ranges(fit: Fit, policy: str, threshold: float) -> dict[str, tuple[float, float]]:
    """after / before for makespan and short p50 on the fitted model and its neighbours: the
    step 30% off either way and, for a lower-bound batch size, twice the batch."""
    c = fit.config
    variants = [
        c,
        replace(c, step_ms=c.cost_model().step_ms * 0.7),
        replace(c, step_ms=c.cost_model().step_ms * 1.3),
    ]
    if fit.kind == "static" and not fit.report.batch_size_exact:
        variants.append(replace(c, batch_size=2 * c.batch_size))
    spans, shorts = [], []
    for cfg in variants:
        b, a = _both(replace(fit, config=cfg), policy)
        sb, sa = _side(b, threshold), _side(a, threshold)
        spans.append(sa.makespan / sb.makespan)
        shorts.append(sa.short_p50 / sb.short_p50 if sb.short_p50 else 1.0)
    return {"makespan": (min(spans), max(spans)), "short_p50": (min(shorts), max(shorts))}


def _side(run: SimRun, threshold: float) -> Side:
    done = [r for r in run.results if r.end is not None]
    short = [r.e2e or 0.0 for r in done if r.output_tokens <= threshold]
    long = [r.e2e or 0.0 for r in done if r.output_tokens > threshold] or short
    holds = [r.hold or 0.0 for r in done]
    return Side(
        _p(short, 50),
        _p(short, 99),
        _p(long, 50),
        _p(long, 99),
        run.makespan,
        statistics.fmean(holds) if holds else 0.0,
    )


def _p(values: list[float], q: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
