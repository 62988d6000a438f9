"""One request as the detector sees it: start, first content, own content end, end, pace.

Rule 1: only observed times and token counts are used, never what was asked for
        (``max_tokens`` or ``ignore_eos`` may have been ignored by the server).
Rule 2: a request's *own* end is when its content really ended: the last content chunk,
        or earlier when that last chunk came after a silence far longer than its tokens
        need (a server that coalesces tokens flushes held tokens at the batch end).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._trace import StreamTrace

__all__ = ["Req", "estimate_step", "views"]


@dataclass(frozen=True, slots=True)
class Req:
    """The times (seconds, one clock) and sizes of one finished request."""

    rid: str
    label: str | None
    sent: float
    first: float  # first content
    end: float
    tokens: int | None  # output tokens, None when unknown
    prompt_tokens: int | None
    times: tuple[float, ...] = ()  # content chunk arrival times ("" for summary-only input)
    ktoks: tuple[float, ...] = ()  # tokens each content chunk carried (exact or average)
    own_end: float = 0.0  # filled by :func:`with_own_end`

    @property
    def chunked(self) -> bool:
        return len(self.times) >= 2


def views(traces: Iterable[StreamTrace]) -> tuple[list[Req], int]:
    """Requests usable for detection (ok, with sent, first content and end) and how many not."""
    out: list[Req] = []
    dropped = 0
    for t in traces:
        if t.outcome != "ok" or t.sent is None or t.first_content is None or t.end is None:
            dropped += 1
            continue
        times, ktoks = _content_chunks(t)
        tokens = t.usage.completion_tokens
        out.append(
            Req(
                rid=t.request_id,
                label=t.label,
                sent=t.sent,
                first=t.first_content,
                end=t.end,
                tokens=tokens if tokens else (None if not times else int(sum(ktoks))),
                prompt_tokens=t.usage.prompt_tokens,
                times=times,
                ktoks=ktoks,
                own_end=t.last_content if t.last_content is not None else t.end,
            )
        )
    return out, dropped


def _content_chunks(t: StreamTrace) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Content chunk times and their token counts (the average when only totals are known)."""
    idx = [i for i, c in enumerate(t.chunk_chars) if c > 0]
    if not idx:
        return (), ()
    times = tuple(t.chunk_times[i] for i in idx)
    if not t.chunk_tokens_estimated:
        return times, tuple(float(max(t.chunk_tokens[i], 1)) for i in idx)
    total = t.usage.completion_tokens
    per = total / len(idx) if total and not t.usage.estimated else 1.0
    return times, tuple(per for _ in idx)


def estimate_step(reqs: Sequence[Req]) -> float | None:
    """Median time per token between consecutive content chunks: the decode step.

    Chunks a busy client read together (closer than a quarter of the typical time per token,
    from each request's span) count as one read carrying their tokens: a 2-core client reading
    16 streams at 100 tokens/s each read a third of a burst's short answers in bunches, and the
    plain median of gaps said 0.4 ms where the server stepped every 13.5 ms.
    """
    rates = [
        (r.times[-2] - r.times[0]) / k
        for r in reqs
        if len(r.times) >= 3 and (k := sum(r.ktoks[1:-1])) > 0 and r.times[-2] > r.times[0]
    ]
    floor = 0.25 * statistics.median(rates) if rates else 0.0
    gaps = []
    for r in reqs:
        groups: list[list[float]] = []  # reads taken together: [first read's time, tokens]
        prev = None
        for t, k in zip(r.times, r.ktoks, strict=False):
            if prev is not None and (t - prev < floor or t <= prev):
                groups[-1][1] += k
            else:
                groups.append([t, k])
            prev = t
        gaps += [(b[0] - a[0]) / b[1] for a, b in itertools.pairwise(groups) if b[1] > 0]
    return statistics.median(gaps) if len(gaps) >= 3 else None


def with_own_end(r: Req, step: float | None) -> Req:
    """``r`` with its own content end: earlier than the last chunk when that chunk was held."""
    if step is None or not r.chunked:
        return _replace_own_end(r, r.own_end)
    prev, last, k = r.times[-2], r.times[-1], r.ktoks[-1]
    if last - prev > (k + 3.0) * step:  # the last tokens were ready long before they came
        return _replace_own_end(r, prev + k * step)
    return _replace_own_end(r, r.times[-1])


def _replace_own_end(r: Req, own_end: float) -> Req:
    from dataclasses import replace

    return replace(r, own_end=min(own_end, r.end))
