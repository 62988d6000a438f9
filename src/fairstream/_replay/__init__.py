"""What-if replay: with my traffic, on my server, what would the dispatcher have saved?

:func:`replay` fits a server model to recorded traffic (:mod:`._fit`), replays the same
requests in virtual time on the reference engine as they were sent and checks that this
reproduces what was observed (:mod:`._check`; it refuses otherwise), then replays them through
a dispatcher policy and compares the two: short and long requests' E2E from submission,
makespan, and the time finished answers were held hostage. Every through-policy figure comes
with an interval (:mod:`._interval`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._dispatch._names import make_policy
from .._errors import ReplayRefused
from ..sim import SimRun
from ._check import SelfCheck, self_check
from ._declump import declump
from ._fit import Fit, Observed, _most_in_flight, fit_server, observed_requests
from ._interval import intervals, run_both

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = ["Fit", "Replay", "ReplayRefused", "SelfCheck", "Side", "fit_server", "replay"]


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
    check: SelfCheck
    # (low, high) for makespan and short_p50 (seconds) and their ratios to what was observed
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

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
            "self_check": self.check.to_dict(),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "intervals": {k: [round(a, 4), round(b, 4)] for k, (a, b) in self.intervals.items()},
        }


def replay(
    traces: list[StreamTrace],
    policy: str = "auto",
    resolution: float = 0.0,
    *,
    check: bool = True,
) -> Replay:
    """Fit, check, replay as sent and through ``policy`` (a name: ``auto``, ``waves:8``, ...).

    Raises :class:`~fairstream.ReplayRefused` when the traces are too thin to fit, or (with
    ``check``, the default) when the fitted model fails its self-check: an answer from a
    model that does not reproduce the recording would be a confident guess.
    """
    make_policy(policy)  # a bad name fails here, before any work
    cleaned = declump(traces)
    traces = cleaned.traces
    thin = _thin(observed_requests(traces)) or _stalled(traces, cleaned.stalls)
    if thin:
        raise ReplayRefused(thin)
    fit = fit_server(traces, resolution)
    if cleaned.stalls:
        fit.notes.append(
            f"the client's event loop stalled {len(cleaned.stalls)} times"
            f" ({sum(cleaned.stalls):.2g} s in all) while it recorded: chunks read late after"
            " a stall were moved back into it; an idle client's `fairstream probe` measures"
            " the server without that guess"
        )
    threshold = statistics.median(r.output_tokens for r in fit.requests)
    before_run, after_run = run_both(fit, fit.requests, policy)
    verdict = self_check(before_run, fit.requests, threshold)
    if check and not verdict.ok:
        raise ReplayRefused(verdict.reasons(), verdict.to_dict())
    out = Replay(
        fit,
        policy,
        _side(before_run, threshold),
        _side(after_run, threshold),
        before_run,
        after_run,
        verdict,
    )
    out.intervals = intervals(fit, traces, policy, threshold, verdict)
    return out


def _thin(requests: list[Observed]) -> list[str]:
    """What the traces lack for any fit at all (empty when enough)."""
    if len(requests) < 2:
        return [
            f"need at least 2 finished requests with send and end times to fit; found"
            f" {len(requests)}"
        ]
    if _most_in_flight(requests) < 2:
        return [
            "no two requests were ever in flight together, so nothing shows how the server"
            " batches them"
        ]
    return []


MAX_STALL_SHARE = 0.25  # of the recording's span: past that the traces show the client


def _stalled(traces: list[StreamTrace], stalls: list[float]) -> list[str]:
    """A refusal when the client's loop stalled through much of the recording."""
    sent = [t.sent for t in traces if t.sent is not None]
    ends = [t.end for t in traces if t.end is not None]
    span = max(ends) - min(sent)
    share = sum(stalls) / span if span > 0 else 0.0
    if share <= MAX_STALL_SHARE:
        return []
    return [
        f"the client's event loop was stalled for {share:.0%} of the recording"
        f" ({len(stalls)} stalls, {sum(stalls):.2g} s): its times say more about the busy"
        f" client than about the server (at most {MAX_STALL_SHARE:.0%} can be corrected for)"
    ]


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
    if q == 50:  # the median, as the self-check and the intervals take it
        return statistics.median(values)
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
