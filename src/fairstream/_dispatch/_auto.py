"""``auto``: keep the server exactly full, and hold everything else in our queue, shortest first.

The limit is what the server runs now plus a budget of requests waiting at the server:

    limit = running + budget        running: in flight with a first token (they hold a slot)

So the server is never starved (every freed slot is refilled at once, and the budget is
already waiting for it), and whatever it cannot start yet waits in our queue, where a short
request that arrives later can still go first. The budget is what the server's kind needs:

- ``unknown`` (cold start): ``max(start, running)``, doubling with what the server takes
  (16, 32, 64, ...), so a burst fills a 64-slot server in a few first tokens, and a static
  server always has a full batch waiting when its batch ends;
- ``continuous``: the slots expected to free within two decode steps (completions per
  second x 2 steps, at least 1): a freed slot finds its next request already there, and
  nobody else waits inside the server where we can no longer reorder. While requests start
  promptly (first token within the quickest seen plus 2 steps) the server has free slots:
  the budget doubles, up to what runs; a late start sets it back;
- ``static`` (batch size B, from the detector): the next batch, ``max(running, B)``, of
  similar lengths because the queue is ordered (no more: what waits at the server can no
  longer be reordered when shorter requests arrive); ``sequential``: 1.

The kind is known early without waiting for finished traces: a request sent after another
had started, that starts while that one is still running, proves the server refills a
running batch, which static batching never does (two such refills: ``continuous``). The
detector (:func:`fairstream.analyze` on the recent traces) confirms static batching (and B)
or one-at-a-time service, and keeps checking, so a server restarted with another scheduler
is noticed. 429/503 halve the budget (and the dispatcher pauses for Retry-After).
"""

from __future__ import annotations

import logging
import math
import statistics
from collections import deque
from typing import TYPE_CHECKING, Literal

from .._detect import BatchingReport, analyze
from ._policies import Policy
from ._queue import Order

if TYPE_CHECKING:
    from .._trace import StreamTrace
    from ._job import Job

__all__ = ["Auto"]

log = logging.getLogger("fairstream.dispatch")
Kind = Literal["unknown", "continuous", "static", "sequential"]


class Auto(Policy):
    """Fills the server to what it runs, holds the rest shortest-first (see the module doc)."""

    name = "auto"

    def __init__(
        self,
        start: int = 16,
        *,
        order: Order = "shortest",
        check_every: int = 8,
        window: int = 64,
        confidence: float = 0.7,
        max_limit: int = 4096,
    ) -> None:
        super().__init__()
        self.start, self.order, self.max_limit = start, order, max_limit
        self.check_every, self.confidence = check_every, confidence
        self.kind: Kind = "unknown"
        self.batch_size: int | None = None
        self.report: BatchingReport | None = None
        self.changes: list[str] = []
        self.refills = 0
        self._waiting: dict[int, float] = {}  # sent, no first token yet: jid -> sent
        self._running: dict[int, float] = {}  # first token seen, not done: jid -> first token
        self._recent: deque[StreamTrace] = deque(maxlen=window)
        self._since = 0
        self._overloads = 0
        self._quickest = math.inf  # the lowest TTFT seen: a request that found a free slot
        self._grown = 0  # continuous: budget above the base while starts stay prompt
        self._tpots: deque[float] = deque(maxlen=32)  # recent time per output token
        self._ends: deque[float] = deque(maxlen=64)  # recent completion times

    # -- the limit -----------------------------------------------------------------------------
    @property
    def running(self) -> int:
        return len(self._running)

    def budget(self) -> int:
        """Requests allowed to wait at the server, for the server's kind."""
        run = self.running
        if self.kind == "continuous":
            b = max(self._base(), min(self._grown, run))
        elif self.kind == "static":  # a full batch waiting when the running one ends
            b = max(run, self.batch_size or 0) or self.start
        elif self.kind == "sequential":
            b = 1
        else:
            b = max(self.start, run)
        return max(1, b >> self._overloads)

    def limit(self) -> int:
        return max(1, min(self.max_limit, self.running + self.budget()))

    def step(self) -> float | None:
        """A decode step (median time per output token of recent requests), once known."""
        return statistics.median(self._tpots) if self._tpots else None

    def _base(self) -> int:
        """Continuous: the slots expected to free within two steps (at least 1)."""
        step, ends = self.step(), self._ends
        if step is None or len(ends) < 4 or ends[-1] <= ends[0]:
            return 2
        rate = (len(ends) - 1) / (ends[-1] - ends[0])  # completions per second
        return max(1, math.ceil(rate * 2 * step))

    # -- events --------------------------------------------------------------------------------
    def on_send(self, job: Job, now: float) -> None:
        self._waiting[job.jid] = now

    def on_first_token(self, job: Job, now: float) -> None:
        sent = self._waiting.pop(job.jid, None)
        if sent is None:
            return
        # a request that started after it was sent while one started earlier still runs:
        # the server refilled a running batch (static batching never does)
        if any(t < sent for t in self._running.values()):
            self.refills += 1
            if self.refills >= 2 and self.kind in ("unknown", "static"):
                self._become("continuous", "requests started while earlier ones still ran")
        self._running[job.jid] = now
        ttft = now - sent
        self._quickest = min(self._quickest, ttft)
        step = self.step()
        prompt = self._quickest + 2 * step if step else 3 * self._quickest
        if ttft <= prompt:  # found a free slot: the server has room
            self._grown = max(2 * self._grown, 4)
        else:  # waited inside the server: it is full
            self._grown = 0

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self._waiting.pop(job.jid, None)
        self._running.pop(job.jid, None)
        if job.ok and self._overloads:
            self._overloads -= 1
        self._recent.extend(t for t in traces if t.outcome == "ok")
        self._tpots.extend(t.tpot for t in traces if t.tpot)
        self._ends.append(now)
        self._since += 1
        if self._since >= (1 if self.kind == "unknown" else self.check_every):
            self._since = 0
            self.recheck()

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self._overloads = min(self._overloads + 1, 8)

    # -- deciding ------------------------------------------------------------------------------
    def recheck(self) -> None:
        """Analyze the recent traces; change the kind if a confident verdict says another."""
        report = analyze(list(self._recent))
        self.report = report
        if report.verdict == "unknown" or report.confidence < self.confidence:
            return
        if report.verdict == "static":
            size = report.batch_size  # exact, or a lower bound
            if self.kind != "static" or (size and size > (self.batch_size or 0)):
                self.batch_size = size
                self._become("static", report.summary)
        elif report.verdict == "sequential" and self.kind != "sequential":
            self._become("sequential", report.summary)
        elif report.verdict == "continuous" and self.kind != "continuous":
            self._become("continuous", report.summary)

    def _become(self, kind: Kind, why: str) -> None:
        before = self.describe()
        self.kind = kind
        msg = f"{before} -> {self.describe()}: {why}"
        self.changes.append(msg)
        log.info("dispatcher policy %s", msg)

    def describe(self) -> str:
        size = f", B={self.batch_size}" if self.kind == "static" and self.batch_size else ""
        return f"auto: {self.kind}{size} (limit {self.limit()})"
