"""``auto``: start conservatively, watch its own traces, switch to what the detector says.

While nothing is known it sends shortest-first waves that double in size (4, 8, 16, ...),
each with one explorer sent mid-wave: a continuous server starts the explorer at once, a
static one makes it wait for the batch, and the first wave the server cannot take at once
shows the batch size. Waves are safe on any server: on a static one they are the right
policy, on a continuous one they only underuse it until the verdict. It analyzes its recent
traces at each wave and every ``check_every`` completions, and once a verdict is confident
switches: static -> ``waves`` (batch size B, or B+2 while B is a lower bound),
continuous -> ``gradient`` (paced when prefill stalls are seen), sequential -> ``serial``;
a known batch size with no verdict yet (requests of equal length look alike on both kinds
of server) fixes the wave size. It keeps checking, so a server restarted with another
configuration is noticed; each change is logged once.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING

from .._detect import BatchingReport, analyze
from ._gradient import Gradient
from ._policies import Policy, Serial, Waves
from ._queue import FairQueue, Order

if TYPE_CHECKING:
    from .._trace import StreamTrace
    from ._job import Job

__all__ = ["Auto"]

log = logging.getLogger("fairstream.dispatch")


class Auto(Policy):
    """The policy the detector recommends, re-decided as evidence comes in."""

    name = "auto"

    def __init__(
        self,
        start: int = 4,
        *,
        order: Order = "shortest",
        check_every: int = 8,
        window: int = 64,
        confidence: float = 0.7,
        explore_every: int = 16,
    ) -> None:
        super().__init__()
        self.order = order
        self.inner: Policy = Waves(start, order=order, explore_every=1, grow=True, explorers=2)
        self.check_every, self.confidence, self.explore_every = (
            check_every,
            confidence,
            explore_every,
        )
        self.report: BatchingReport | None = None
        self.changes: list[str] = []
        self._recent: deque[StreamTrace] = deque(maxlen=window)
        self._since = 0

    # -- delegation ------------------------------------------------------------------------
    def limit(self) -> int:
        return self.inner.limit()

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        inner = self.inner
        if isinstance(inner, Waves) and inner.between_waves and self._since:
            self._since = 0
            self.recheck()  # a wave just ended: the best moment to decide
        return self.inner.admit(queue, in_flight, now)

    def next_wakeup(self, now: float) -> float | None:
        return self.inner.next_wakeup(now)

    def on_send(self, job: Job, now: float) -> None:
        self.inner.on_send(job, now)

    def on_first_token(self, job: Job, now: float) -> None:
        self.inner.on_first_token(job, now)
        inner = self.inner
        if isinstance(inner, Waves) and inner.grow and inner.refills >= 2:
            # two explorers started mid-wave: the server refills batches, so it is not static;
            # no need to wait for their traces to finish
            nxt = Gradient(max(inner.batch_size, 1), order=self.order)
            self._log(f"{inner.describe()} -> {nxt.describe()}: explorers started mid-wave")
            self.inner = nxt

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self.inner.on_overload(now, retry_after)

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self.inner.on_done(job, now, traces)
        self._recent.extend(t for t in traces if t.outcome == "ok")
        self._since += 1
        ramping = isinstance(self.inner, Waves) and self.inner.grow
        if self._since >= (1 if ramping else self.check_every):  # decide early while ramping
            self._since = 0
            self.recheck()

    def describe(self) -> str:
        return f"auto: {self.inner.describe()}"

    # -- deciding --------------------------------------------------------------------------
    def recheck(self) -> None:
        """Analyze the recent traces; switch policy if a confident verdict asks for another."""
        report = analyze(list(self._recent))
        self.report = report
        if report.verdict == "unknown" or report.confidence < self.confidence:
            inner = self.inner
            if report.batch_size_exact and isinstance(inner, Waves) and inner.grow:
                # the server showed its batch size: stop the ramp there
                inner.stop_ramp(report.batch_size or inner.batch_size, self.explore_every)
                self._log(f"ramp stopped at the batch size the server showed: {inner.describe()}")
            return
        nxt = self._policy_for(report)
        if nxt is not None:
            before = self.inner.describe()
            self.inner = nxt
            self._log(f"{before} -> {nxt.describe()}: {report.summary}")

    def _log(self, msg: str) -> None:
        self.changes.append(msg)
        log.info("dispatcher policy %s", msg)

    def _policy_for(self, report: BatchingReport) -> Policy | None:
        cur = self.inner
        if report.verdict == "static":
            size, exact = report.batch_size, report.batch_size_exact
            if isinstance(cur, Waves):
                # the batch size only grows: a smaller wave than B can look "full" when a
                # partial wave or an explorer shares the server's queue with it
                if exact and size and (cur.grow or size > cur.batch_size):
                    size = size if cur.grow else max(size, cur.batch_size)
                    return Waves(size, order=self.order, explore_every=self.explore_every)
                return None  # a lower bound only: keep ramping, or keep the size we found
            if exact and size:
                return Waves(size, order=self.order, explore_every=self.explore_every)
            return Waves(max(size or 1, cur.limit()), order=self.order, explore_every=1, grow=True)
        if report.verdict == "sequential":
            return None if isinstance(cur, Serial) else Serial(self.order)
        stalls = bool(report.prefill_stalls)
        step = (report.step_ms or 0.0) / 1e3
        if isinstance(cur, Gradient):
            cur.interval = 2 * step if stalls else 0.0
            return None
        return Gradient(max(cur.limit(), 1), order=self.order, interval=2 * step if stalls else 0.0)
