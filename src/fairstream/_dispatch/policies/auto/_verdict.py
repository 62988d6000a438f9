"""``auto``'s reading of the server's kind: the detector's verdict, checked against what was sent.

``analyze`` on the recent traces (of 3 chunks or more) gives the kind and B when confident,
except that a refill disproves static batching and what slow start saw run can make a lower
bound exact (``docs/dispatcher.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from ...._detect import BatchingReport, analyze
from ._state import SAW_CONTINUOUS, SAW_SEQUENTIAL, SAW_STATIC, Event

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ._base import Kind
    from ._situation import Situation

__all__ = ["Verdict", "read", "static_size"]


class Verdict(NamedTuple):
    """A confident reading that moves ``auto``: the event, and B for a static one."""

    event: Event
    batch_size: int | None = None
    batch_exact: bool = False


def _telling(t: StreamTrace) -> bool:
    """A trace long enough to show how the server batches: three chunks or more."""
    return len(t.content_chunk_times) >= 3


def read(
    traces: Iterable[StreamTrace], s: Situation, kind: Kind, confidence: float
) -> tuple[BatchingReport, Verdict | None]:
    """The detector's report on ``traces``, and the move it calls for (None: none)."""
    # one- and two-chunk answers show nothing of how a server batches (they end as they
    # start), and a cold client reads a burst's first ones late and bunched: judged alone
    # they read as batches of 1, or one at a time, on a 64-slot continuous server
    seen = [t for t in traces if _telling(t)]
    report = analyze(seen)
    if report.verdict == "unknown" or report.confidence < confidence:
        return report, None
    refilled = any(t.sent is not None and t.sent <= s.refills.last for t in seen)
    if report.verdict == "static" and not refilled:  # a refill disproves static batching
        size, exact = static_size(report, s)
        now_exact = bool(size) and size == s.batch_size and exact
        if (
            kind != "static"
            or (size and size > (s.batch_size or 0))
            or (now_exact and not s.batch_exact)
        ):
            return report, Verdict(SAW_STATIC, size, exact)
    elif report.verdict == "sequential" and kind != "sequential":
        return report, Verdict(SAW_SEQUENTIAL)
    elif report.verdict == "continuous" and kind != "continuous":
        return report, Verdict(SAW_CONTINUOUS)
    return report, None


def static_size(report: BatchingReport, s: Situation) -> tuple[int | None, bool]:
    """B from a static verdict, and whether it is exact: the detector's, or what ran while a
    request sent with them waited in slow start, if no fewer (the detector does not know what
    was in flight: a continuous 8-slot server read as static B>=8 sent 16 at the next end,
    and 8 of them waited a whole 128-token run)."""
    size, exact = report.batch_size, report.batch_size_exact
    if not exact and size and size <= s.full_seen:
        size, exact = s.full_seen, True
    if exact and size and s.peak and size > s.peak:
        # more than ever ran at once here: over HTTP a backlogged client reads two short
        # batches' first tokens bunched, as one wave (B = 9-13 in a third of the real runs on
        # a B=8 server, and every batch then had one left over); a lower bound is explored
        # (twice it sent, a full batch shows)
        size, exact = s.peak, False
    return size, exact
