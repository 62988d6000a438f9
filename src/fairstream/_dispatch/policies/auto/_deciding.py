"""``auto``'s verdict on the server's kind: the detector's, checked against what was sent.

A mixin of :class:`~fairstream.Auto`: ``analyze`` on the recent traces (of 3 chunks or more) sets
the kind and B when confident, except that a refill disproves static batching and what slow
start saw run can make a lower bound exact (``docs/dispatcher.md``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

from ...._detect import BatchingReport, analyze

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ._refills import Refills

__all__ = ["Deciding", "Kind"]

log = logging.getLogger("fairstream.dispatch")
Kind = Literal["unknown", "continuous", "static", "sequential"]


def _telling(t: StreamTrace) -> bool:
    """A trace long enough to show how the server batches: three chunks or more."""
    return len(t.content_chunk_times) >= 3


class Deciding:
    """The kind-deciding half of :class:`~fairstream.Auto`."""

    kind: Kind
    batch_size: int | None
    batch_exact: bool
    confidence: float
    report: BatchingReport | None
    changes: list[str]
    slow_start: bool
    peak: int
    _offer: int
    _below_peak: bool
    _full_seen: int
    _refills: Refills
    _recent: deque[StreamTrace]
    _unstall: Callable[[], None]
    describe: Callable[[], str]

    def recheck(self, traces: Iterable[StreamTrace] | None = None) -> None:
        """Analyze the recent traces (or ``traces``); change the kind if a confident verdict
        says another."""
        # one- and two-chunk answers show nothing of how a server batches (they end as they
        # start), and a cold client reads a burst's first ones late and bunched: judged alone
        # they read as batches of 1, or one at a time, on a 64-slot continuous server
        seen = [t for t in (self._recent if traces is None else traces) if _telling(t)]
        report = analyze(seen)
        self.report = report
        if report.verdict == "unknown" or report.confidence < self.confidence:
            return
        refilled = any(t.sent is not None and t.sent <= self._refills.last for t in seen)
        if report.verdict == "static" and not refilled:  # a refill disproves static batching
            size, exact = self._static_size(report)
            now_exact = bool(size) and size == self.batch_size and exact
            if (
                self.kind != "static"
                or (size and size > (self.batch_size or 0))
                or (now_exact and not self.batch_exact)
            ):
                self.batch_size, self.batch_exact = size, exact
                self._become("static", report.summary)
        elif report.verdict == "sequential" and self.kind != "sequential":
            self._become("sequential", report.summary)
        elif report.verdict == "continuous" and self.kind != "continuous":
            self._become("continuous", report.summary)

    def _static_size(self, report: BatchingReport) -> tuple[int | None, bool]:
        """B from a static verdict, and whether it is exact: the detector's, or what ran while
        a request sent with them waited in slow start, if no fewer (the detector does not know
        what was in flight: a continuous 8-slot server read as static B>=8 sent 16 at the
        next end, and 8 of them waited a whole 128-token run)."""
        size, exact = report.batch_size, report.batch_size_exact
        if not exact and size and size <= self._full_seen:
            size, exact = self._full_seen, True
        if exact and size and self.peak and size > self.peak:
            # more than ever ran at once here: over HTTP a backlogged client reads two short
            # batches' first tokens bunched, as one wave (B = 9-13 in a third of the real runs
            # on a B=8 server, and every batch then had one left over); a lower bound is
            # explored (twice it sent, a full batch shows)
            size, exact = self.peak, False
        return size, exact

    def _become(self, kind: Kind, why: str) -> None:
        before = self.describe()
        if kind == "continuous" and self.kind == "unknown" and self._below_peak:
            # what ended slow start (a late start with fewer running than the peak, just after
            # others ended) was read as a static server's next batch: on a continuous one it
            # was our own sending (a round of 15 sends on 2 cores), so ramp on, from the peak:
            # growth earned before it (an 8-slot server's first 8 starts offered 24) would
            # send a round to wait there
            self.slow_start, self._below_peak = True, False
            self._offer = min(self._offer, self.peak + 2)
        self.kind = kind
        self._unstall()
        self._log_change(f"{before} -> {self.describe()}: {why}")

    def _log_change(self, msg: str) -> None:
        self.changes.append(msg)
        log.info("dispatcher policy %s", msg)
