"""A server model fitted to recorded traffic: the kind the detector names, and a cost model
whose replay of the requests, as they were sent, comes closest to what was observed.

The requests come from the traces: when each was submitted and sent (relative to the first),
its prompt and output tokens, and the length a dispatcher would have been told (``max_tokens``
when the trace has it, else the output). The kind, batch size and release come from
:func:`fairstream.analyze`; the step time and prefill cost are searched on a grid around what
the traces show (time per output token, first-token times per prompt token), scoring each
candidate by replaying the requests in virtual time on the reference engine.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from .._detect import BatchingReport, analyze
from .._dispatch.policies._tail import most_running
from ..server import ServerConfig
from ..sim import SimRequest, SimRun, simulate

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = ["Fit", "Observed", "fit_server", "observed_requests"]

Kind = Literal["static", "continuous", "prefill-stalls", "sequential"]


@dataclass(frozen=True, slots=True)
class Observed:
    """One recorded request: times in seconds from the first submission."""

    rid: str
    submitted: float
    sent: float
    ttft: float | None  # from sending
    e2e: float  # from sending
    prompt_tokens: int
    output_tokens: int
    expected_tokens: float
    label: str | None
    arrival: float = 0.0  # when it reaches the replayed server (see ``_bursts``)

    def as_sent(self) -> SimRequest:
        return self._request(self.arrival)

    def as_submitted(self) -> SimRequest:
        return self._request(self.submitted)

    def _request(self, at: float) -> SimRequest:
        return SimRequest(at, self.prompt_tokens, self.output_tokens, rid=self.rid,
                          expected_tokens=self.expected_tokens, label=self.label)  # fmt: skip


@dataclass(slots=True)
class Fit:
    """The fitted server model and how well its replay matches the file."""

    kind: Kind
    config: ServerConfig
    report: BatchingReport
    requests: list[Observed]
    e2e_error: float  # median over requests of |replayed - observed| / observed E2E
    makespan_error: float  # (replayed - observed) / observed
    ttft_error: float | None  # the same for first-token times, where the file has them
    chunk_times: bool  # the traces had chunk times (not summary lines)
    notes: list[str] = field(default_factory=list)
    alternatives: dict[str, float] = field(default_factory=dict)  # kind -> its E2E error

    @property
    def step_ms(self) -> float:
        return self.config.cost_model().step_ms

    def describe(self) -> str:
        c, cost = self.config, self.config.cost_model()
        what = {
            "static": f"static batches of {c.batch_size}"
            + ("" if self.report.batch_size_exact else " (a lower bound)")
            + (", finished streams held to the batch's end" if c.release == "batch_end" else ""),
            "continuous": f"continuous batching, {c.max_num_seqs} at once at most",
            "prefill-stalls": "continuous batching whose prefills stall the decodes",
            "sequential": "one request at a time",
        }[self.kind]
        pre = cost.prefill_ms_per_token
        per = f", {pre:.3g} ms per prompt token" if pre else ""
        step = cost.step_ms
        return f"{what}; a {_ms(step)} step{per}"


def observed_requests(traces: list[StreamTrace], burst: float = 0.010) -> list[Observed]:
    """The requests of ``traces`` that were sent and ended, in submission order; submissions
    chained less than ``burst`` seconds apart are one burst (see :func:`_bursts`)."""
    usable = [t for t in traces if t.sent is not None and t.end is not None and t.end > t.sent]
    if not usable:
        return []
    t0 = min(_submitted(t) for t in usable)
    out = []
    for t in usable:
        sent, end = t.sent or 0.0, t.end or 0.0
        # no token counts at all (the seed's table): every answer taken as the same length
        n = t.usage.completion_tokens or len(t.content_chunk_times) or UNKNOWN_LENGTH
        first = t.first_content if t.first_content is not None else t.first_chunk
        expected = float(t.max_tokens) if t.max_tokens else float(n)
        out.append(
            Observed(
                t.request_id,
                _submitted(t) - t0,
                sent - t0,
                None if first is None else first - sent,
                end - sent,
                t.usage.prompt_tokens or 32,
                n,
                expected,
                t.label,
            )
        )
    return _bursts(sorted(out, key=lambda r: r.submitted), burst)


UNKNOWN_LENGTH = 16  # tokens, for a request whose file gives no count


def _bursts(requests: list[Observed], gap: float) -> list[Observed]:
    """Requests each submitted within ``gap`` of the one before came together (an app's
    ``gather``: what spreads their recorded times is the client sending them one by one, and
    on a busy client its event loop stalling between sends; a chain, not a window from the
    first, so a stall mid-burst does not cut the burst in two).

    Through a policy, the replayed dispatcher may order the whole burst, as a real one does.
    As sent, the burst reaches the replayed server in the order the real server took it up
    (by first token, else end): over HTTP concurrent connections arrive in any order, and a
    server queues by arrival, not by when the client began to send."""
    out, group = [], list[Observed]()

    def close() -> None:
        start = group[0].submitted
        taken = sorted(group, key=lambda r: r.sent + (r.ttft if r.ttft is not None else r.e2e))
        for i, r in enumerate(taken):
            out.append(replace(r, submitted=start, arrival=group[0].sent + i * 1e-6))

    for r in requests:
        if group and r.submitted - group[-1].submitted > gap:
            close()
            group = []
        group.append(r)
    if group:
        close()
    return sorted(out, key=lambda r: (r.submitted, r.arrival))


def _submitted(t: StreamTrace) -> float:
    return t.enqueued if t.enqueued is not None else (t.sent or 0.0)


def fit_server(traces: list[StreamTrace], resolution: float = 0.0) -> Fit:
    """Fit a server model to ``traces`` (see the module doc); ValueError if nothing to fit."""
    requests = observed_requests(traces)
    if len(requests) < 2:
        raise ValueError("need at least 2 finished requests with send and end times to fit")
    report = analyze(traces, resolution=resolution)
    chunked = any(len(t.chunk_times) > 1 for t in traces)
    kinds = _kinds(report)
    fits = {k: _fit_kind(k, report, requests, traces) for k in kinds}
    best = kinds[0]  # the detector's verdict, unless another kind fits far better
    for k in kinds[1:]:  # (a score is a mean squared relative error: 0.01 is 10% rms)
        if fits[k][1] < 0.5 * fits[best][1] and fits[best][1] > 0.01:
            best = k
    config = fits[best][0]
    run = simulate(config.build_engine(), [r.as_sent() for r in requests])
    errors, span_err = _errors(run, requests)
    got = run.by_id()
    ttft = [
        abs((got[r.rid].first_token or 0.0) - r.sent - r.ttft) / r.ttft
        for r in requests
        if r.ttft and got[r.rid].first_token is not None
    ]
    fit = Fit(best, config, report, requests, statistics.median(errors), span_err,
              statistics.median(ttft) if ttft else None, chunked)  # fmt: skip
    for k, (cfg, _) in fits.items():  # how well the other kinds replay the file
        if k != best:
            other = simulate(cfg.build_engine(), [r.as_sent() for r in requests])
            fit.alternatives[k] = round(statistics.median(_errors(other, requests)[0]), 4)
    if best != kinds[0]:
        fit.notes.append(f"the detector said {kinds[0]}, but {best} replays the file far better")
    if not chunked:
        fit.notes.append(
            "summary lines carry no chunk times: the step and prefill costs are fitted from"
            " first-token and end times alone"
        )
    if any(not (t.usage.completion_tokens or t.content_chunk_times) for t in traces):
        fit.notes.append(
            "some requests have no token counts: each is taken as"
            f" {UNKNOWN_LENGTH} tokens, so lengths cannot be told apart"
        )
    if best == "static" and not report.batch_size_exact:
        fit.notes.append(f"batch size {config.batch_size} is a lower bound (no full batch seen)")
    if fit.ttft_error is not None and fit.ttft_error > 0.25:
        fit.notes.append(
            f"the model misses first-token times by {fit.ttft_error:.0%} (median): it fits"
            " when answers end better than when they start"
        )
    if report.confidence < 0.7:
        fit.notes.append(f"the detector's confidence is {report.confidence:.2f}")
    if len(requests) < 8:
        fit.notes.append(f"only {len(requests)} requests: every figure is a rough guess")
    return fit


def _kinds(report: BatchingReport) -> list[Kind]:
    """The detector's kind first, then the others to compare with."""
    first: Kind = {
        "static": "static",
        "sequential": "sequential",
        "continuous": "prefill-stalls" if report.prefill_stalls else "continuous",
    }.get(report.verdict, "continuous")
    rest: list[Kind] = ["static", "continuous", "prefill-stalls", "sequential"]
    return [first, *(k for k in rest if k != first)]


def _fit_kind(
    kind: Kind, report: BatchingReport, requests: list[Observed], traces: list[StreamTrace]
) -> tuple[ServerConfig, float]:
    """The best cost model for ``kind`` on a grid, and its score."""
    step0, pre0 = _first_guess(requests)
    # the most that ran at once (from chunk times), else the most in flight (summary lines)
    peak = max(1, most_running(traces) or _most_in_flight(requests))
    batch = report.batch_size or peak
    # coordinate descent over (step, per-sequence, prefill, static batch wait) ms on 1-D
    # grids: a few dozen replays per kind, not the product of them
    # where to start: the detector's step (it allows for streams held open) or the traces'
    # time per token, whichever replays better on its own
    starts = [x for x in (report.step_ms, step0) if x]
    step0 = min(starts, key=lambda a: _score(_config(kind, [a, 0, 0, 0], batch, peak, report),
                                             requests))  # fmt: skip
    grids = [
        [step0 * f for f in (0.3, 0.45, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)],
        [0.0, *(step0 * f for f in (0.01, 0.02, 0.04, 0.08))],
        [0.0, *(pre0 * f for f in (0.03, 0.1, 0.3, 0.6, 1.0))],
        [0.0, *(step0 * f for f in (0.5, 1.0, 2.0, 4.0, 8.0))],  # how long a batch waits to fill
    ]
    # static: the batch wait first; others from the step, and again from the prefill cost (a
    # step fitted first can absorb the prefills: that descent missed a continuous-8 server's
    # makespan by 10%, 3 runs in 8), the better of the two
    orders = (
        [(3, 0, 2, 1, 3, 0, -1)] if kind == "static" else [(0, 2, 1, 0, -1), (2, 0, 1, 2, 0, -1)]
    )
    fits = [_descend(kind, [step0, 0.0, 0.0, 0.0], axes, grids, batch, peak, report, requests)
            for axes in orders]  # fmt: skip
    return min(fits, key=lambda f: f[1])


def _descend(
    kind: Kind,
    point: list[float],
    axes: tuple[int, ...],
    grids: list[list[float]],
    batch: int,
    peak: int,
    report: BatchingReport,
    requests: list[Observed],
) -> tuple[ServerConfig, float]:
    """Coordinate descent from ``point`` along ``axes`` (-1: the step again, finely)."""
    best: tuple[ServerConfig, float] | None = None
    for axis in axes:
        if axis == -1:  # last, the step again, finely around where it stands
            axis, values = 0, [point[0] * f for f in (0.92, 0.96, 1.04, 1.08)]
        else:
            values = grids[axis]
        for value in values:
            trial = [*point]
            trial[axis] = value
            cfg = _config(kind, trial, batch, peak, report)
            score = _score(cfg, requests)
            if best is None or score < best[1]:
                best, point = (cfg, score), trial
    assert best is not None
    return best


def _config(
    kind: Kind, cost_ms: list[float], batch: int, peak: int, report: BatchingReport
) -> ServerConfig:
    """``cost_ms``: step, per running sequence, per prompt token, static batch wait (ms)."""
    step, per_seq, prefill, wait = cost_ms
    cost = ServerConfig(step_ms=max(step, 1e-3), per_seq_ms=per_seq, prefill_ms_per_token=prefill)
    if kind == "static":
        release = "stream" if report.release == "stream" else "batch_end"
        return cost.with_(
            mode="static", batch_size=max(1, batch), release=release, batch_timeout_ms=wait
        )
    if kind == "sequential":
        return cost.with_(mode="sequential")
    return cost.with_(max_num_seqs=max(1, peak), prefill_priority=kind == "prefill-stalls")


def _score(cfg: ServerConfig, requests: list[Observed]) -> float:
    """Mean squared relative error of the replayed E2E (and TTFT, where known), plus the
    makespan's, weighted as all the requests together."""
    run = simulate(cfg.build_engine(), [r.as_sent() for r in requests])
    got = run.by_id()
    span = _errors(run, requests)[1] ** 2 * len(requests)
    total, n = 0.0, 0
    for r in requests:
        res = got[r.rid]
        if res.end is None:
            return math.inf
        total += ((res.end - res.arrival) / r.e2e - 1.0) ** 2
        n += 1
        if r.ttft and res.first_token is not None:
            total += 0.5 * ((res.first_token - res.arrival) / max(r.ttft, 1e-3) - 1.0) ** 2
            n += 1
    return (total + span) / max(n, 1)


def _errors(run: SimRun, requests: list[Observed]) -> tuple[list[float], float]:
    got = run.by_id()
    errors = [abs((got[r.rid].e2e or 0.0) - r.e2e) / r.e2e for r in requests]
    observed_span = max(r.sent + r.e2e for r in requests) - min(r.sent for r in requests)
    replayed_span = max((x.end or 0.0) for x in run.results) - min(r.sent for r in requests)
    return errors, replayed_span / observed_span - 1.0


def _first_guess(requests: list[Observed]) -> tuple[float, float]:
    """Step (ms): the lower quartile of the time per output token after the first (a stream
    held open to its batch's end looks slower than it was); prefill (ms per prompt token):
    the median first-token time per prompt token (an upper bound: it counts waits)."""
    tpot = [
        (r.e2e - r.ttft) / (r.output_tokens - 1)
        for r in requests
        if r.ttft is not None and r.output_tokens > 1 and r.e2e > r.ttft
    ] or [r.e2e / r.output_tokens for r in requests]
    step = statistics.quantiles(tpot, n=4)[0] if len(tpot) > 1 else tpot[0]
    ttft = [r.ttft / r.prompt_tokens for r in requests if r.ttft and r.prompt_tokens]
    return max(step * 1000, 1e-3), (statistics.median(ttft) * 1000 if ttft else 0.0)


def _most_in_flight(requests: list[Observed]) -> int:
    events = sorted(
        [(r.sent, 1) for r in requests] + [(r.sent + r.e2e, -1) for r in requests],
        key=lambda e: (e[0], e[1]),
    )
    most = now = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most


def _ms(ms: float) -> str:
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.3g} ms"
