"""How sure a what-if answer is: the same replay on every reading of the traces that fits
them about as well, and on the requests resampled.

Rule 1: the readings are the fitted model with its step 15% off either way; the same with no
        per-sequence or prefill cost (a client's delays only ever make a server look slower,
        and those two terms are where a fit puts them); the step the chunks' spacing within
        each stream shows (its median gap, clumps left out: the evidence client stalls bend
        least), without those costs; and twice the batch where the batch size is only a
        lower bound. Each runs with the submissions grouped into bursts two ways (a 10 ms
        chain, as fitted, and a 50 ms one: a client whose loop stalled spreads one ``gather``
        over tens of milliseconds). Then ``RESAMPLES`` bootstrap resamples of the requests
        run on the fitted model.
Rule 2: an interval runs from the least to the most any reading gives, widened on both sides
        by the self-check's error on that figure, at least ``MIN_MARGIN`` (two real runs of
        one server differ by about that much), and by ``SLACK_STEPS`` steps of the fitted
        model (virtual time has no network and no client: a real dispatcher's waves start a
        step or two later than the replayed ones).
Rule 3: an adaptive policy (``auto``, ``gradient``, ``aimd``) decides on what it measures in
        real time, which virtual time reproduces only roughly (a cold process's first burst,
        say): its readings also include the requests as they were sent, since such a policy
        promises no worse than that and no more (on the requests as recorded, not the
        resamples).
Rule 4: a ratio is the through-policy interval over what was observed as sent.
Rule 5: resampling is seeded: the same traces give the same intervals.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from .._dispatch._names import make_policy
from ..sim import SimRun, simulate
from ._check import SelfCheck
from ._declump import CLUMP_GAP
from ._fit import Fit, Observed, observed_requests

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = [
    "ADAPTIVE",
    "MIN_MARGIN",
    "RESAMPLES",
    "SLACK_STEPS",
    "Figures",
    "chunk_step_ms",
    "figures",
    "intervals",
    "run_both",
]

ADAPTIVE = frozenset({"auto", "gradient", "aimd"})
MIN_MARGIN = 0.10
SLACK_STEPS = 4
RESAMPLES = 8
Figures = dict[str, float]


def run_both(fit: Fit, requests: list[Observed], policy: str) -> tuple[SimRun, SimRun]:
    """``requests`` replayed on the fitted model as they were sent, then through ``policy``."""
    return _as_sent(fit, requests), _through(fit, requests, policy)


def figures(after: SimRun, threshold: float) -> Figures:
    """Makespan and short/long E2E p50 (seconds from submission) of a replay."""
    done = [r for r in after.results if r.end is not None]
    short = [r.e2e or 0.0 for r in done if r.output_tokens <= threshold]
    long = [r.e2e or 0.0 for r in done if r.output_tokens > threshold] or short
    return {
        "makespan": after.makespan,
        "short_p50": statistics.median(short) if short else 0.0,
        "long_p50": statistics.median(long) if long else 0.0,
    }


def intervals(
    fit: Fit,
    traces: list[StreamTrace],
    policy: str,
    threshold: float,
    check: SelfCheck,
) -> dict[str, tuple[float, float]]:
    """Each figure's interval, and each ratio's to what was observed (module rules)."""
    readings = list(_readings(fit, traces))
    seen = [figures(_through(model, requests, policy), threshold) for model, requests in readings]
    if policy.partition(":")[0] in ADAPTIVE:
        seen += [
            figures(_as_sent(model, requests), threshold)
            for model, requests in readings
            if requests is fit.requests  # the models, on the requests as recorded
        ]
    slack = SLACK_STEPS * fit.step_ms / 1000
    out = {}
    for name in ("makespan", "short_p50"):  # (the verdict's two figures)
        margin = max(MIN_MARGIN, abs(check.errors[name]))
        values = [f[name] for f in seen]
        low = max(0.0, min(values) * (1 - margin) - slack)
        high = max(values) * (1 + margin) + slack
        observed = check.observed[name]
        out[name] = (low, high)
        out[f"{name}_ratio"] = (low / observed, high / observed) if observed else (1.0, 1.0)
    return out


def _as_sent(fit: Fit, requests: list[Observed]) -> SimRun:
    return simulate(fit.config.build_engine(), [r.as_sent() for r in requests])


def _through(fit: Fit, requests: list[Observed], policy: str) -> SimRun:
    return simulate(
        fit.config.build_engine(),
        [r.as_submitted() for r in requests],
        policy=make_policy(policy),
    )


def _readings(fit: Fit, traces: list[StreamTrace]) -> Iterator[tuple[Fit, list[Observed]]]:
    c = fit.config
    step = c.cost_model().step_ms
    models = [fit, *(replace(fit, config=replace(c, step_ms=step * f)) for f in (0.85, 1.15))]
    bare = replace(c, per_seq_ms=0.0, prefill_ms_per_token=0.0)
    if bare != c:
        models += [replace(fit, config=replace(bare, step_ms=step * f)) for f in (0.85, 1.0)]
    gap = chunk_step_ms(traces)
    if gap is not None:
        models.append(replace(fit, config=replace(bare, step_ms=gap)))
    if fit.kind == "static" and not fit.report.batch_size_exact:
        models.append(replace(fit, config=replace(c, batch_size=2 * c.batch_size)))
    loose = observed_requests(traces, burst=0.050)
    for model in models:
        yield model, fit.requests
        if _differ(loose, fit.requests):
            yield model, loose
    rng = random.Random(0)
    n = len(fit.requests)
    for _ in range(RESAMPLES):
        picked = [
            replace(r, rid=f"{r.rid}#{i}") for i, r in enumerate(rng.choices(fit.requests, k=n))
        ]
        yield fit, sorted(picked, key=_order)


def chunk_step_ms(traces: list[StreamTrace]) -> float | None:
    """The median gap between a stream's consecutive content chunks (ms), leaving out the
    clumps a stalled client reads at once; None without chunk times (summary lines)."""
    gaps = [g for t in traces for g in t.itl if g >= CLUMP_GAP]
    return statistics.median(gaps) * 1000 if gaps else None


def _order(r: Observed) -> tuple[float, float]:
    return (r.submitted, r.arrival)


def _differ(a: list[Observed], b: list[Observed]) -> bool:
    key: Callable[[Observed], tuple[str, float]] = lambda r: (r.rid, r.submitted)  # noqa: E731
    return sorted(map(key, a)) != sorted(map(key, b))
