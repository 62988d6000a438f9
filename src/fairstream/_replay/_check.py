"""The self-check that runs before any what-if answer: does the fitted model, fed the requests
as they were sent, reproduce what was observed?

Rule 1: three figures are compared: the makespan, as (replayed - observed) / observed, and
        the E2E p50 of short and of long requests (E2E from the request's arrival as
        replayed). A p50 of a few requests is only known to a few ranks: on a static server
        one short request more or less in the first batch moves it by a whole batch. So a
        replayed p50 counts as matching anywhere within the observed 40th-60th percentile
        band, and its error is its distance from that band over the observed p50.
Rule 2: a figure off by more than its tolerance fails the check; ``replay`` then refuses
        rather than answer from a model that does not describe the traces.
Rule 3: the errors the check measures widen every interval the answer gives (a model that
        misses what it saw by 15% cannot predict what it did not see any closer).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..sim import SimRun
from ._fit import Observed

__all__ = ["TOLERANCE", "SelfCheck", "observed_figures", "replayed_figures", "self_check"]

# The largest error each figure may show before replay refuses. The makespan is one number
# the whole run sets; a p50 is one request's E2E, and on a static server one batch more or
# less in front of it moves it by a whole batch, so it is allowed more.
TOLERANCE: dict[str, float] = {"makespan": 0.20, "short_p50": 0.35, "long_p50": 0.35}


@dataclass(frozen=True, slots=True)
class SelfCheck:
    """Observed and replayed figures (seconds), their relative errors and what failed."""

    observed: dict[str, float]
    replayed: dict[str, float]
    errors: dict[str, float]
    failed: list[str]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Per figure: observed, replayed, error and tolerance (what ``ReplayRefused`` holds)."""
        return {
            k: {
                "observed": round(self.observed[k], 4),
                "replayed": round(self.replayed[k], 4),
                "error": round(self.errors[k], 4),
                "tolerance": TOLERANCE[k],
            }
            for k in self.observed
        }

    def reasons(self) -> list[str]:
        """One plain sentence per failed figure."""
        names = {"makespan": "makespan", "short_p50": "short requests' p50",
                 "long_p50": "long requests' p50"}  # fmt: skip
        return [
            f"replayed as they were sent, the fitted model gives a {names[k]} of"
            f" {self.replayed[k]:.3g} s against the observed {self.observed[k]:.3g} s"
            f" ({self.errors[k]:+.0%}{'' if k == 'makespan' else _OUTSIDE}; more than the"
            f" {TOLERANCE[k]:.0%} allowed)"
            for k in self.failed
        ]


BAND = (0.4, 0.6)  # the quantiles a replayed p50 may fall between (rule 1)
_OUTSIDE = " outside the observed 40th-60th percentile band"


def observed_figures(requests: list[Observed], threshold: float) -> dict[str, float]:
    """Makespan and short/long E2E p50 of the recorded requests (from when each reached the
    server as replayed: a burst's first send, so both sides measure from the same instant)."""
    e2e = {r.rid: r.sent + r.e2e - r.arrival for r in requests}
    short = [e2e[r.rid] for r in requests if r.output_tokens <= threshold]
    long = [e2e[r.rid] for r in requests if r.output_tokens > threshold] or short
    span = max(r.sent + r.e2e for r in requests) - min(r.sent for r in requests)
    return {"makespan": span, "short_p50": _p50(short), "long_p50": _p50(long)}


def replayed_figures(run: SimRun, requests: list[Observed], threshold: float) -> dict[str, float]:
    """The same figures from the replay of ``requests`` as they were sent."""
    got = run.by_id()
    e2e = {r.rid: (got[r.rid].end or 0.0) - r.arrival for r in requests}
    short = [e2e[r.rid] for r in requests if r.output_tokens <= threshold]
    long = [e2e[r.rid] for r in requests if r.output_tokens > threshold] or short
    span = max((x.end or 0.0) for x in run.results) - min(r.arrival for r in requests)
    return {"makespan": span, "short_p50": _p50(short), "long_p50": _p50(long)}


def self_check(before: SimRun, requests: list[Observed], threshold: float) -> SelfCheck:
    """Compare the replay as sent with the recording (module rules 1 and 2)."""
    observed = observed_figures(requests, threshold)
    replayed = replayed_figures(before, requests, threshold)
    bands = _bands(requests, threshold)
    errors = {}
    for k, v in observed.items():
        low, high = bands.get(k, (v, v))
        miss = min(max(replayed[k], low), high)  # the nearest point of the band
        errors[k] = (replayed[k] - miss) / v if v > 0 else 0.0
    failed = [k for k, e in errors.items() if abs(e) > TOLERANCE[k]]
    return SelfCheck(observed, replayed, errors, failed)


def _bands(requests: list[Observed], threshold: float) -> dict[str, tuple[float, float]]:
    e2e = {r.rid: r.sent + r.e2e - r.arrival for r in requests}
    short = sorted(e2e[r.rid] for r in requests if r.output_tokens <= threshold)
    long = sorted(e2e[r.rid] for r in requests if r.output_tokens > threshold) or short
    return {"short_p50": _band(short), "long_p50": _band(long)}


def _band(ordered: list[float]) -> tuple[float, float]:
    if not ordered:
        return (0.0, 0.0)
    return (_quantile(ordered, BAND[0]), _quantile(ordered, BAND[1]))


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between ranks (numpy's default), on sorted values."""
    pos = q * (len(ordered) - 1)
    i = int(pos)
    j = min(i + 1, len(ordered) - 1)
    return ordered[i] + (ordered[j] - ordered[i]) * (pos - i)


def _p50(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
