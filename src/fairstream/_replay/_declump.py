"""Undo what the client's own stalls did to the recorded times, before a server is fitted.

When the client's event loop is blocked (a busy app, a CPU-bound thread holding the GIL), the
server's chunks wait in the socket and are all read, and stamped, in one clump when the loop
runs again: a stream shows gaps of a tenth of a millisecond after a long silence, and its
first tokens and ends come late by up to the stall. Fitted as they are, those times make the
server look slower than it is (a per-request cost appears that is the client's).

Rule 1: a stall clump is a run of stamps (every trace's content chunks) less than
        ``CLUMP_GAP`` apart, after a silence of at least ``MIN_STALL``, in which some stream
        has two content chunks or more: a server emits one chunk per stream per step, so two
        at once were waiting to be read.
Rule 2: the stamps of each trace inside a clump are spread evenly over the silence before
        it (from its send, if it was sent during the silence), in their order: what was read
        at once arrived at some time during the stall, and evenly is the least biased guess.
        Every time of the trace is mapped the same way.
Rule 3: sends are the client's own acts and stay where they were; a clean recording has no
        stall clumps and comes back unchanged.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = ["CLUMP_GAP", "MIN_STALL", "Declumped", "declump"]

CLUMP_GAP = 0.0005
MIN_STALL = 0.002
_FIELDS = ("headers", "first_chunk", "first_content", "last_content", "finish_chunk", "end")


@dataclass(frozen=True, slots=True)
class Declumped:
    """The corrected traces, and the stalls found (seconds each)."""

    traces: list[StreamTrace]
    stalls: list[float]


@dataclass(frozen=True, slots=True)
class _Clump:
    silence_start: float
    start: float
    end: float  # the clump's last stamp


def declump(traces: list[StreamTrace]) -> Declumped:
    """Apply the module's rules to ``traces``."""
    clumps = _stall_clumps(traces)
    if not clumps:
        return Declumped(list(traces), [])
    return Declumped(
        [_moved(t, clumps) for t in traces], [c.start - c.silence_start for c in clumps]
    )


def _stall_clumps(traces: list[StreamTrace]) -> list[_Clump]:
    stamps = sorted(
        (at, i)
        for i, t in enumerate(traces)
        for at, chars in zip(t.chunk_times, t.chunk_chars, strict=False)
        if chars > 0
    )
    out: list[_Clump] = []
    k = 0
    while k < len(stamps):
        j = k
        while j + 1 < len(stamps) and stamps[j + 1][0] - stamps[j][0] < CLUMP_GAP:
            j += 1
        silence = stamps[k][0] - stamps[k - 1][0] if k else 0.0
        members = [i for _, i in stamps[k : j + 1]]
        if silence >= MIN_STALL and len(members) > len(set(members)):
            out.append(_Clump(stamps[k - 1][0], stamps[k][0], stamps[j][0]))
        k = j + 1
    return out


def _moved(t: StreamTrace, clumps: list[_Clump]) -> StreamTrace:
    times = sorted(
        {*t.chunk_times, *(v for v in (getattr(t, f) for f in _FIELDS) if v is not None)}
    )
    mapping: dict[float, float] = {}
    for c in clumps:
        lo = bisect.bisect_left(times, c.start)
        hi = bisect.bisect_right(times, c.end + CLUMP_GAP)
        inside = times[lo:hi]
        # a request sent during the silence can only have been answered after its send
        begin = max(c.silence_start, t.sent if t.sent is not None else c.silence_start)
        span = c.start - begin
        for n, at in enumerate(inside):
            mapping[at] = begin + span * (n + 1) / (len(inside) + 1)
    if not mapping:
        return t
    fields = {f: mapping.get(v, v) for f in _FIELDS if (v := getattr(t, f)) is not None}
    chunk_times = tuple(mapping.get(v, v) for v in t.chunk_times)
    return replace(t, chunk_times=chunk_times, **fields)
