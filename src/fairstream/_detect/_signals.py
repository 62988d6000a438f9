"""The detection signals of DESIGN.md section 4, each a pure function of the requests.

Every function takes the requests (with their own content ends), the step time (None for
summary-only input) and a tolerance ``tol`` (seconds within which two events count as
simultaneous), and returns plain numbers; the verdict is decided elsewhere.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ._view import Req

__all__ = [
    "Clusters",
    "admissions_mid_decode",
    "demand_overlaps",
    "end_sync",
    "free_slot_waits",
    "holds",
    "max_overlap",
    "saturated",
    "stalls",
    "start_clusters",
    "waits_behind_one",
]


def demand_overlaps(reqs: Sequence[Req]) -> bool:
    """Were two requests ever outstanding at once (sent, not yet ended)?"""
    spans = sorted((r.sent, r.end) for r in reqs)
    return any(b[0] < a[1] for a, b in itertools.pairwise(spans)) if spans else False


def max_overlap(reqs: Sequence[Req], tol: float) -> int:
    """Most requests generating at once (intervals shrunk by ``tol/2`` at each side)."""
    spans = [(r.first + tol / 2, r.own_end - tol / 2) for r in reqs]
    best = 1 if reqs else 0
    for lo, hi in spans:
        if hi < lo:
            continue
        best = max(best, sum(1 for a, b in spans if a <= lo <= b and a <= b))
    return best


def admissions_mid_decode(reqs: Sequence[Req], tol: float) -> list[Req]:
    """Requests whose first content came while another, started earlier, was mid-generation.

    Impossible under static batching (a batch is never refilled) and sequential service.
    """
    out = []
    for j in reqs:
        for i in reqs:
            if i is j or j.first - i.first <= tol:
                continue
            if i.first + tol < j.first < i.own_end - tol:
                out.append(j)
                break
    return out


def holds(reqs: Sequence[Req], step: float | None, tol: float) -> dict[str, float]:
    """Per request: time its stream stayed open after its own content ended (chunk input)."""
    if step is None:
        return {}
    floor = 3 * step + tol
    return {r.rid: r.end - r.own_end for r in reqs if r.chunked and r.end - r.own_end >= floor}


def counterfactual_starts(reqs: Sequence[Req], cap: int) -> dict[str, float]:
    """When each request could have started under FCFS continuous batching with ``cap`` slots.

    Others keep their observed generation spans; requests sent earlier and not yet started
    count as ahead in the queue. (Sorted times and bisection: ``auto`` runs this on every
    recheck inside the client's event loop, and the plain triple loop held it 5 ms a call.)
    """
    spans = [r for r in reqs if r.first < r.own_end]  # generating over [first, own_end)
    firsts, ends = sorted(r.first for r in spans), sorted(r.own_end for r in spans)
    all_ends = sorted(r.own_end for r in reqs)
    by_sent = sorted(reqs, key=lambda r: r.sent)
    ahead: list[float] = []  # first tokens of the requests sent before ``j`` (sorted)
    k, out = 0, {}
    for j in by_sent:
        while k < len(by_sent) and by_sent[k].sent < j.sent:
            bisect.insort(ahead, by_sent[k].first)
            k += 1

        def busy(t: float, j: Req = j) -> int:
            running = bisect.bisect_right(firsts, t) - bisect.bisect_right(ends, t)
            if j.first <= t < j.own_end:  # not itself
                running -= 1
            return running + len(ahead) - bisect.bisect_right(ahead, t)

        start, last, own = None, j.sent, j.own_end > j.sent
        if busy(j.sent) < cap:
            start = j.sent
        else:  # the others' ends after its send, in order (its own end is no candidate)
            for t in all_ends[bisect.bisect_right(all_ends, j.sent) :]:
                if own and t == j.own_end:
                    own = False
                    continue
                last = t
                if busy(t) < cap:
                    start = t
                    break
        out[j.rid] = last if start is None else start
    return out


def free_slot_waits(
    reqs: Sequence[Req], cap: int, base_ttft: float, grace: float
) -> dict[str, float]:
    """Per request: how long it waited beyond when continuous batching would have started it."""
    starts = counterfactual_starts(reqs, cap)
    ends = sorted(t for r in reqs for t in (r.end, r.own_end))
    waits = {}
    for r in reqs:
        late = r.first - (starts[r.rid] + base_ttft)
        # gated: it began just as another request ended (a slow prefill is not a wait)
        began = r.first - base_ttft
        if late >= grace and any(r.sent < t and abs(began - t) <= grace for t in ends):
            waits[r.rid] = late
    return waits


def waits_behind_one(reqs: Sequence[Req], tol: float, min_wait: float) -> int:
    """Requests that waited in a queue and began just as another request ended, passed over
    once: already waiting when the server took another one in.

    The other must have generated for a while: a one-chunk answer's end is its first chunk,
    and a burst of those (over HTTP they trickle in, a client's send apart) is no queue. A
    static server too keeps a lone request waiting until the running batch ends; only one
    left waiting while another began tells one at a time from a batch (at low load a static
    server runs one request a batch, and ``auto`` read it as one at a time, then sent one at
    a time, which never showed otherwise)."""
    ends = [(r, t) for r in reqs if r.own_end - r.first > tol for t in (r.end, r.own_end)]
    base = min(r.first - r.sent for r in reqs)
    return sum(
        1
        for j in reqs
        if j.first - j.sent >= base + min_wait
        and any(abs(j.first - t) <= 3 * tol for i, t in ends if i is not j)
        and any(j.sent < k.first - base - tol and k.first < j.first - tol for k in reqs)
    )


@dataclass(frozen=True, slots=True)
class Clusters:
    """Requests grouped by a time (first content or end) within a tolerance."""

    groups: list[list[Req]]


def start_clusters(reqs: Sequence[Req], tol: float) -> Clusters:
    """Groups of requests whose first contents arrived together (within ``tol``)."""
    return Clusters(_cluster(reqs, lambda r: r.first, tol))


def isolated(groups: Sequence[Sequence[Req]], gap: float) -> list[Sequence[Req]]:
    """Start clusters (in time order) at least ``gap`` from both neighbours. A client reading a
    backlog late chains the first tokens of two short batches a step apart into one wave (B
    read as 9-13 on a B=8 server over HTTP), or splits one at a stall; a batch that ran a
    while between two others shows whole."""
    out = []
    for i, g in enumerate(groups):
        before = i == 0 or g[0].first - groups[i - 1][-1].first >= gap
        after = i == len(groups) - 1 or groups[i + 1][0].first - g[-1].first >= gap
        if before and after:
            out.append(g)
    return out


def _cluster(reqs: Sequence[Req], get: Callable[[Req], float], tol: float) -> list[list[Req]]:
    ordered = sorted(reqs, key=get)
    groups: list[list[Req]] = []
    for r in ordered:
        if groups and get(r) - get(groups[-1][-1]) <= tol:
            groups[-1].append(r)
        else:
            groups.append([r])
    return groups


def saturated(group: Sequence[Req], reqs: Sequence[Req], tol: float) -> bool:
    """Was someone already waiting when ``group`` formed, yet left out (so it was full)?

    The group formed about one minimal TTFT (its prefill) before its first tokens; a
    request sent after that could not have joined it, however close its send time, and
    one sent long before any member may have been held back for other reasons.
    """
    start = min(r.first for r in group)
    formed = start - min(r.first - r.sent for r in reqs) - tol
    ids = {r.rid for r in group}
    sends = [m.sent for m in group]
    return any(
        r.rid not in ids
        and r.sent < formed
        and r.first > start + tol
        # sent along with a member: it was competing for this very batch, not a straggler
        and any(abs(r.sent - t) <= tol for t in sends)
        for r in reqs
    )


def end_sync(
    reqs: Sequence[Req], step: float | None, tol: float
) -> tuple[list[list[Req]], list[list[Req]]]:
    """End clusters whose members would have ended apart at their own pace.

    Returns (synchronized clusters, those among them whose members also started together).
    Own pace: first content + (tokens - 1) x step with chunk input; with summary input,
    first content (requests of similar length), since no step time is known.
    """

    def pace_end(r: Req) -> float | None:
        if step is not None and r.tokens is not None:
            return r.first + max(r.tokens - 1, 0) * step
        return r.first

    synced, together = [], []
    for group in _cluster(reqs, lambda r: r.end, tol):
        if len(group) < 2:
            continue
        tokens = [r.tokens for r in group if r.tokens is not None]
        if step is None and tokens and max(tokens) > 1.25 * max(min(tokens), 1):
            # lengths differ and no step to weigh them: starts alone can't judge pace
            paces = None
        else:
            paces = [p for p in map(pace_end, group) if p is not None]
        ends = [r.end for r in group]
        spread_end = max(ends) - min(ends)
        if paces and max(paces) - min(paces) >= max(4 * tol, 4 * spread_end):
            synced.append(group)
        firsts = [r.first for r in group]
        if max(firsts) - min(firsts) <= tol and len(set(tokens)) > 1 and spread_end <= tol:
            together.append(group)
    return synced, together


def stalls(reqs: Sequence[Req], newcomers: Sequence[Req], step: float, tol: float) -> list[float]:
    """Per admission mid-decode: the extra delay (in steps) of running streams around it."""
    out = []
    # the running streams' spans and whether their chunk times are in order, once per call
    live = [
        (i, i.first + tol, i.own_end - tol, all(a <= b for a, b in itertools.pairwise(i.times)))
        for i in reqs
        if i.chunked
    ]
    for j in newcomers:
        # its first token came with the prefill; a coalescing server sends it k-1 steps later
        t0 = j.first - (j.ktoks[0] - 1) * step if j.ktoks else j.first
        excess = []
        for i, lo, hi, ordered in live:
            if i is j or not lo < j.first < hi:
                continue
            gap = _gap_at(i, t0 - 0.25 * step, ordered)
            if gap is not None:
                a, b, k = gap
                excess.append((b - a - k * step) / step)
        if excess:
            out.append(statistics.median(excess))
    return out


def _gap_at(r: Req, t: float, ordered: bool) -> tuple[float, float, float] | None:
    """The first pair of consecutive chunks of ``r`` around ``t`` (``a < t <= b``) and the
    later one's tokens; None if none. Bisected when the chunk times are ``ordered`` (they are,
    from a live trace), scanned otherwise."""
    times, n = r.times, min(len(r.times), len(r.ktoks))
    if ordered:
        m = bisect.bisect_left(times, t)
        return (times[m - 1], times[m], r.ktoks[m]) if 1 <= m < n else None
    for m in range(1, n):
        if times[m - 1] < t <= times[m]:
            return times[m - 1], times[m], r.ktoks[m]
    return None
