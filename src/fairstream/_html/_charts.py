"""The page's pictures as numbers: timeline rows and segments, coinciding finishes, and CDFs.

Everything is laid out here in SVG user units, so the template only places what it is given
and the page needs no charting library (it opens offline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .._detect._view import estimate_step, views, with_own_end
from .._trace import StreamTrace

__all__ = ["Cdf", "Row", "Timeline", "cdf", "timeline"]

WIDTH = 1000.0  # the timeline's drawing width (user units); labels sit left of it
LABEL = 120.0  # room for request ids when rows are tall enough to name


@dataclass(frozen=True, slots=True)
class Row:
    """One request: its times (seconds from the first start) and its bar's segments."""

    rid: str
    label: str
    outcome: str
    start: float
    first: float | None
    end: float
    queued: float | None
    ttft: float | None
    e2e: float | None
    tokens: int | None
    tps: float | None
    held: float
    segments: tuple[tuple[str, float, float], ...]  # (kind, x, width) in user units
    synced: bool  # its finish coincides with others'


@dataclass(frozen=True, slots=True)
class Timeline:
    """All rows, the axis, and the moments where several requests finished together."""

    rows: tuple[Row, ...]
    span: float
    row_height: float
    height: float
    ticks: tuple[tuple[float, str], ...]  # (x, text)
    marks: tuple[tuple[float, int], ...]  # (x, how many finished there)
    tolerance: float
    together: int  # requests in marked groups
    named: bool  # rows tall enough to carry their ids
    waited: float = 0.0  # the longest a request that finished with others outstayed its pace
    x0: float = LABEL
    width: float = WIDTH


@dataclass(frozen=True, slots=True)
class Cdf:
    """A cumulative distribution in a small box: its polyline and its quantiles."""

    name: str
    points: str
    lo: float
    hi: float
    quantiles: dict[str, float] = field(default_factory=dict)
    n: int = 0


def _fmt(x: float) -> float:
    return round(x, 2)


def timeline(traces: Sequence[StreamTrace], resolution: float = 0.0) -> Timeline:
    """Rows for every trace with a start and an end, in start order."""
    usable = [t for t in traces if _start(t) is not None and t.end is not None]
    own = _own_ends(usable)
    if not usable:
        return Timeline((), 0.0, 10.0, 40.0, (), (), 0.0, 0, False)
    t0 = min(_start(t) or 0.0 for t in usable)
    span = max((t.end or 0.0) - t0 for t in usable) or 1.0
    ends = sorted(((t.end or 0.0) - t0, i) for i, t in enumerate(usable))
    tol = max(resolution, 0.01 * span, 1e-3)
    least = 2 if len(usable) <= 8 else 3
    groups, synced = _coinciding(ends, tol, least)
    n = len(usable)
    h = max(3.0, min(16.0, 640.0 / n))
    scale = WIDTH / span
    rows = []
    for i, t in enumerate(usable):
        start = (_start(t) or 0.0) - t0
        end = (t.end or 0.0) - t0
        own_end = own.get(id(t), t.end or 0.0) - t0
        rows.append(_row(t, t0, start, end, own_end, scale, i in synced))
    rows.sort(key=lambda r: (r.start, r.rid))
    marks = tuple((_fmt(LABEL + x * scale), k) for x, k in groups)
    ticks = tuple((_fmt(LABEL + v * scale), f"{v:g}") for v in _ticks(span))
    waited = _outstayed([r for r in rows if r.synced])
    return Timeline(tuple(rows), span, h, n * h, ticks, marks, tol, len(synced), h >= 12.0, waited)


def _outstayed(rows: list[Row]) -> float:
    """Among requests that finished together: how much longer one took after its first token
    than another of them took for at least as many tokens (the seed: 8 tokens in 81 s after a
    first token at 7.5 s, 8 tokens in 23 s after one at 63.6 s: 58 s spent waiting)."""
    post = [(r.end - r.first, r.tokens) for r in rows if r.first is not None and r.tokens]
    most = 0.0
    for p, k in post:
        quickest = min(
            (q for q, j in post if j is not None and k is not None and j >= k), default=p
        )
        most = max(most, p - quickest)
    return most


def _start(t: StreamTrace) -> float | None:
    for v in (t.enqueued, t.sent, t.first_content, t.end):
        if v is not None:
            return v
    return None


def _own_ends(traces: Sequence[StreamTrace]) -> dict[int, float]:
    """Each ok trace's own content end (earlier than its end when the stream was held open)."""
    reqs, _ = views(traces)
    step = estimate_step(reqs)
    by_id = {t.request_id: t for t in traces}
    out = {}
    for r in reqs:
        t = by_id.get(r.rid)
        if t is not None:
            out[id(t)] = with_own_end(r, step).own_end
    return out


def _row(
    t: StreamTrace, t0: float, start: float, end: float, own_end: float, scale: float, synced: bool
) -> Row:
    def seg(kind: str, a: float | None, b: float | None) -> tuple[str, float, float] | None:
        if a is None or b is None or b <= a:
            return None
        return (kind, _fmt(LABEL + a * scale), _fmt(max((b - a) * scale, 0.5)))

    sent = None if t.sent is None else t.sent - t0
    first = None if t.first_content is None else t.first_content - t0
    if t.outcome != "ok":
        parts = [
            seg("queued", start, sent),
            seg("failed", sent if sent is not None else start, end),
        ]
    else:
        parts = [
            seg("queued", start, sent),
            seg("waiting", sent if sent is not None else start, first),
            seg("streaming", first if first is not None else sent, own_end),
            seg("held", own_end, end) if end - own_end > 1e-3 else None,
        ]
    segments = tuple(p for p in parts if p is not None)
    tokens = t.usage.completion_tokens
    tps = t.tokens_per_second
    return Row(
        rid=t.request_id,
        label=t.label or "",
        outcome=t.outcome,
        start=round(start, 4),
        first=None if first is None else round(first, 4),
        end=round(end, 4),
        queued=None if sent is None or t.enqueued is None else round(sent - start, 4),
        ttft=t.ttft,
        e2e=t.e2e,
        tokens=tokens,
        tps=None if tps is None or not math.isfinite(tps) else tps,
        held=round(max(0.0, end - own_end), 4) if t.outcome == "ok" else 0.0,
        segments=segments,
        synced=synced,
    )


def _coinciding(
    ends: list[tuple[float, int]], tol: float, least: int
) -> tuple[list[tuple[float, int]], set[int]]:
    """Groups of at least ``least`` ends, each within ``tol`` of the previous: (time, size)."""
    groups: list[tuple[float, int]] = []
    synced: set[int] = set()
    run: list[tuple[float, int]] = []
    for e in [*ends, (math.inf, -1)]:
        if run and e[0] - run[-1][0] > tol:
            if len(run) >= least:
                groups.append((run[-1][0], len(run)))
                synced.update(i for _, i in run)
            run = []
        run.append(e)
    return groups, synced


def _ticks(span: float) -> list[float]:
    """About six round tick values from 0 to ``span``."""
    raw = span / 6
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    count = int(span / step + 1e-9)
    return [round(i * step, 6) for i in range(count + 1)]


def cdf(name: str, values: Sequence[float], width: float = 300.0, height: float = 150.0) -> Cdf:
    """The cumulative distribution of ``values`` as a polyline in a ``width`` x ``height`` box."""
    vals = sorted(v for v in values if v is not None and math.isfinite(v))
    if not vals:
        return Cdf(name, "", 0.0, 0.0)
    lo, hi = vals[0], vals[-1]
    wide = (hi - lo) or 1.0
    n = len(vals)
    pts = [(0.0, height)]
    for i, v in enumerate(vals):
        x = (v - lo) / wide * width
        pts.append((x, height * (1 - i / n)))
        pts.append((x, height * (1 - (i + 1) / n)))
    pts.append((width, 0.0))
    if n > 400:  # thin to about 800 points: the line looks the same, the page stays small
        keep = max(1, len(pts) // 800)
        pts = pts[:1] + pts[1:-1:keep] + pts[-1:]
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    q = {"p50": _q(vals, 0.5), "p90": _q(vals, 0.9), "p99": _q(vals, 0.99)}
    return Cdf(name, points, lo, hi, q, n)


def _q(vals: list[float], p: float) -> float:
    k = min(len(vals) - 1, max(0, math.ceil(p * len(vals)) - 1))
    return vals[k]
