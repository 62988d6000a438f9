"""``analyze(traces) -> BatchingReport``: weigh the signals into a verdict with a confidence.

Rule 1: a confident wrong verdict is the worst outcome; with little evidence say ``unknown``.
Rule 2: confidence = (1 - 2**-support) x support / (support + contradictions), where support
        and contradictions count independent observations; summary-only input caps it at 0.6.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from .._trace import StreamTrace
from . import _signals as sig
from ._report import (
    BatchingReport,
    Evidence,
    Recommendation,
    Release,
    RequestFinding,
    Verdict,
)
from ._view import Req, estimate_step, views, with_own_end

__all__ = ["analyze"]

SUMMARY_CAP = 0.6
# steps lost by running streams per admission: a prefill-only step costs about one step;
# a mixed step only its prefill tokens. Between the two bounds we say we can't tell.
STALL_YES, STALL_NO = 0.7, 0.45


def analyze(traces: Iterable[StreamTrace], *, resolution: float = 0.0) -> BatchingReport:
    """Decide how the server schedules from finished traces (chunk traces or summary lines).

    ``resolution``: how coarse the recorded times are (1.0 for log lines stamped to the second).
    """
    reqs, dropped = views(traces)
    step = estimate_step(reqs)
    reqs = [with_own_end(r, step) for r in reqs]
    ev: list[Evidence] = [Evidence("requests", len(reqs), f"{len(reqs)} finished requests used")]
    if dropped:
        ev.append(Evidence("dropped", dropped, f"{dropped} failed or incomplete requests left out"))
    if len(reqs) < 2 or not sig.demand_overlaps(reqs):
        why = "fewer than two requests" if len(reqs) < 2 else "no two requests were in flight"
        ev.append(Evidence("overlap", 0, f"{why}: nothing shows how the server shares its time"))
        return BatchingReport("unknown", 0.0, requests=len(reqs), evidence=tuple(ev))
    return _Analysis(reqs, step, resolution, ev).report()


class _Analysis:
    """One run of the detector over a fixed set of requests."""

    def __init__(
        self, reqs: list[Req], step: float | None, resolution: float, ev: list[Evidence]
    ) -> None:
        self.reqs, self.step, self.ev = reqs, step, ev
        self.chunked = step is not None
        e2e = statistics.median(r.end - r.sent for r in reqs)
        if step is not None:
            self.tol = max(1.5 * step, resolution, 0.002)
            self.grace = 3 * step + self.tol
        else:
            self.tol = max(resolution, 0.05 * e2e, 0.002)
            self.grace = 3 * self.tol
        if step is not None:
            ev.append(Evidence("step_ms", round(step * 1e3, 3), _step_detail(step)))
        else:
            ev.append(
                Evidence(
                    "summary_input",
                    True,
                    "only summary times (no chunk times): holds, steps and stalls can't be"
                    f" seen, so confidence stays at most {SUMMARY_CAP}; `fairstream probe`"
                    " tells static batching from prefill stalls",
                )
            )

    def report(self) -> BatchingReport:
        reqs, tol, step = self.reqs, self.tol, self.step
        overlap = sig.max_overlap(reqs, tol)
        mid = sig.admissions_mid_decode(reqs, tol)
        held = sig.holds(reqs, step, tol)
        base = min(r.first - r.sent for r in reqs)
        held_back = sig.free_slot_waits(reqs, overlap, base, self.grace) if overlap > 1 else {}
        synced, together = sig.end_sync(reqs, step, tol)
        n_sync = sum(len(g) for g in synced)
        sync = n_sync >= 2 and n_sync >= 0.3 * len(reqs)
        self._evidence_overlap(overlap, mid, held, held_back)
        self._evidence_sync(sync, n_sync, synced, together)

        verdict: Verdict
        release: Release | None = None
        stalls: bool | None = None
        if overlap <= 1:
            behind = sig.waits_behind_one(reqs, tol, self.grace)
            self.ev.append(
                Evidence(
                    "waits_behind_one",
                    behind,
                    f"{behind} requests waited while one other generated and began as it ended",
                )
            )
            verdict, support, against = ("sequential", behind, 0) if behind else ("unknown", 0, 0)
        else:
            static_support = len(held) + len(held_back)
            if not self.chunked:  # no chunks: started together, ended together, lengths differ
                static_support += sum(len(g) - 1 for g in together)
            # a refill mid-decode cannot happen under static batching, while held-back
            # waits can come from a busy client: the former outweighs the latter
            if len(mid) >= 2 and len(mid) >= static_support:
                verdict, support, against = "continuous", len(mid), static_support // 2
                stalls = self._stalls(mid, sync)
            elif static_support and static_support >= 2 * len(mid):  # and mid < static here
                verdict, support, against = "static", static_support, len(mid)
                # one stream whose end came late is what a busy client's late read looks
                # like; a server that holds streams to the batch's end holds many
                if _many(held, reqs) or (not self.chunked and together):
                    release = "batch_end"
                elif self.chunked:
                    release = "stream"
            else:
                verdict, support, against = "unknown", 0, 0
                self.ev.append(
                    Evidence(
                        "undecided",
                        None,
                        "nothing waited and nothing was refilled: static batching that releases"
                        " each stream and continuous batching look alike; stagger the requests"
                        " or run `fairstream probe`",
                    )
                )
        conf = _confidence(support, against)
        if not self.chunked:
            conf = min(conf, SUMMARY_CAP)
        batch, exact = self._batch_size(verdict, overlap)
        return BatchingReport(
            verdict=verdict,
            confidence=conf if verdict != "unknown" else 0.0,
            release=release,
            synchronized_completion=sync,
            prefill_stalls=stalls,
            batch_size=batch,
            batch_size_exact=exact,
            step_ms=None if step is None else step * 1e3,
            requests=len(reqs),
            evidence=tuple(self.ev),
            recommendation=_recommend(verdict, batch, stalls),
            findings=tuple(self._findings(held, held_back)),
        )

    # -- pieces ----------------------------------------------------------------------------
    def _evidence_overlap(
        self, overlap: int, mid: list[Req], held: dict[str, float], held_back: dict[str, float]
    ) -> None:
        ev = self.ev
        ev.append(Evidence("overlap", overlap, f"at most {overlap} requests generated at once"))
        ev.append(
            Evidence(
                "mid_decode_admissions",
                len(mid),
                f"{len(mid)} requests got their first token while an earlier one was still"
                " generating (a static batch is never refilled)",
            )
        )
        if self.chunked:
            mean = statistics.fmean(held.values()) if held else 0.0
            ev.append(
                Evidence(
                    "held",
                    len(held),
                    f"{len(held)} streams stayed open after their content ended"
                    + (f" (on average {mean:.3g} s)" if held else ""),
                )
            )
        mean_b = statistics.fmean(held_back.values()) if held_back else 0.0
        ev.append(
            Evidence(
                "held_back",
                len(held_back),
                f"{len(held_back)} requests waited although a slot had freed"
                + (f" (on average {mean_b:.3g} s)" if held_back else ""),
            )
        )

    def _evidence_sync(
        self, sync: bool, n_sync: int, synced: list[list[Req]], together: list[list[Req]]
    ) -> None:
        ev, reqs = self.ev, self.reqs
        ev.append(
            Evidence(
                "synchronized_completion",
                sync,
                f"{n_sync} of {len(reqs)} requests ended together although at their own pace"
                " they would have ended apart",
            )
        )
        if not self.chunked:
            ev.append(
                Evidence(
                    "started_and_ended_together",
                    sum(len(g) for g in together),
                    "requests of different lengths that started together and ended together",
                )
            )
        slope = _post_first_slope(synced[0] if synced else reqs)
        if slope is not None:
            ev.append(
                Evidence(
                    "post_first_slope",
                    round(slope, 3),
                    "slope of (time after first token) against TTFT: about -1 when everyone"
                    " ends together, about 0 when each ends at its own pace",
                )
            )

    def _stalls(self, mid: list[Req], sync: bool) -> bool | None:
        if self.step is None:
            # summary input: staggered starts, common end => decodes paused for newcomers
            self.ev.append(
                Evidence(
                    "prefill_stalls",
                    sync,
                    "first tokens came at different times yet the requests ended together:"
                    " running decodes waited while newcomers prefilled"
                    if sync
                    else "no sign that running decodes waited for newcomers",
                )
            )
            return sync
        excess = sig.stalls(self.reqs, mid, self.step, self.tol)
        if len(excess) < 2:
            self.ev.append(
                Evidence("prefill_stalls", None, "too few admissions to judge prefill stalls")
            )
            return None
        value = statistics.median(excess)
        stalled = True if value >= STALL_YES else False if value <= STALL_NO else None
        verdict = {True: "decodes pause for prefills", False: "no pause", None: "unclear"}
        self.ev.append(
            Evidence(
                "prefill_stalls",
                round(value, 3),
                f"running streams lost {value:.2f} steps each time a newcomer got its first"
                f" token ({verdict[stalled]})",
            )
        )
        return stalled

    def _batch_size(self, verdict: Verdict, overlap: int) -> tuple[int | None, bool]:
        """The batch size and whether it is exact (a full batch was seen) or a lower bound."""
        reqs, tol = self.reqs, self.tol
        if verdict == "sequential":
            return 1, True
        if verdict == "static":
            groups = sig.start_clusters(reqs, tol).groups
            full = [len(g) for g in groups if sig.saturated(g, reqs, tol)]
            # waves with room around them, when any was full: chained or split ones misread B
            whole = [len(g) for g in sig.isolated(groups, 3 * tol) if sig.saturated(g, reqs, tol)]
            size = max(whole or full) if full else max(len(g) for g in groups)
            self.ev.append(
                Evidence(
                    "batch_waves",
                    len(groups),
                    f"first tokens came in {len(groups)} waves of up to {size}"
                    + ("" if full else " (no wave was full: the batch may be larger)"),
                )
            )
            return size, bool(full)
        if verdict == "unknown" and self.chunked:
            groups = sig.start_clusters(reqs, tol).groups
            full = [len(g) for g in groups if len(g) > 1 and sig.saturated(g, reqs, tol)]
            if full:
                size = max(full)
                self.ev.append(
                    Evidence("capacity", size, f"{size} started together while others waited")
                )
                return size, True
            return None, False
        if verdict == "continuous" and self.chunked:
            quickest = _min_ttft(reqs)
            floor = self.grace + quickest
            ends = [t for r in reqs for t in (r.end, r.own_end)]
            # someone queued and got in exactly when another left: the slots were all taken
            if any(
                r.first - r.sent >= floor
                and any(r.sent < t and abs(r.first - quickest - t) <= self.grace for t in ends)
                for r in reqs
            ):
                return overlap, True
            self.ev.append(
                Evidence("batch_cap", overlap, f"{overlap} ran together and nobody queued")
            )
        return None, False

    def _findings(
        self, held: dict[str, float], held_back: dict[str, float]
    ) -> list[RequestFinding]:
        step = self.step
        out = []
        for r in self.reqs:
            stalled = 0.0
            if step is not None:
                for a, b, k in zip(r.times, r.times[1:], r.ktoks[1:], strict=False):
                    if b > r.own_end:
                        break
                    extra = b - a - k * step
                    if extra > step:
                        stalled += extra
            out.append(
                RequestFinding(
                    request_id=r.rid,
                    label=r.label,
                    tokens=r.tokens,
                    ttft=r.first - r.sent,
                    e2e=r.end - r.sent,
                    held=held.get(r.rid, 0.0),
                    held_back=held_back.get(r.rid, 0.0),
                    stalled=stalled,
                )
            )
        return out


def _min_ttft(reqs: Sequence[Req]) -> float:
    return min(r.first - r.sent for r in reqs)


def _confidence(support: int, against: int) -> float:
    if support <= 0:
        return 0.0
    return (1.0 - 0.5**support) * support / (support + against)


def _post_first_slope(reqs: Sequence[Req]) -> float | None:
    if len(reqs) < 3:
        return None
    ttft = [r.first - r.sent for r in reqs]
    post = [r.end - r.first for r in reqs]
    if max(ttft) - min(ttft) <= 0.2 * statistics.median(r.end - r.sent for r in reqs):
        return None  # first tokens too close together for a slope to mean anything
    return statistics.linear_regression(ttft, post).slope


def _step_detail(step: float) -> str:
    return f"median time per token between chunks: {step * 1e3:.3g} ms (the decode step)"


def _recommend(verdict: Verdict, batch: int | None, stalls: bool | None) -> Recommendation:
    if verdict == "static":
        return Recommendation("waves", batch)
    if verdict == "sequential":
        return Recommendation("serial", 1)
    if verdict == "continuous":
        return Recommendation("gradient", batch)
    return Recommendation("auto", None)


HELD_SHARE = 0.15  # of the requests: a batch_end server holds every member but the longest


def _many(held: dict[str, float], reqs: Sequence[Req]) -> bool:
    """Held streams enough to say the server holds them, not that the client read late."""
    return len(held) >= max(2, HELD_SHARE * len(reqs))
