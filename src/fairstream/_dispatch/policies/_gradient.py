"""``gradient``: a token-aware concurrency limiter for continuous-batching servers.

Signal: TTFT in decode steps (TTFT / TPOT), so a busier batch's slower steps are not taken
for queueing, against a baseline that follows the window's lower quartile and drifts up
slowly (one lucky sample cannot pin it). A first token more than ``tolerance`` x the
baseline and ``margin`` steps late found no free slot. When more than a tenth did, in two
windows running (a burst's shared prefill slows one window, a queue slows them all), the
limit is cut by the number of requests waiting in the server (Little's law: first tokens
per second x mean extra wait), at most by half; samples sent before a cut are not
counted again. Otherwise it grows: doubling in slow start, then +sqrt(limit) while
aggregate tokens/s keeps growing (it pauses at the knee), and +1 a window near the
capacity the last cut found. Sends are spread (at most limit/8 per decode step), and
``interval`` paces them further for servers whose decodes stall on prefills. Windows
close on a count of first tokens or on time, never on completions (LLM completions are
too rare to steer by).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import TYPE_CHECKING

from .._policy import Policy
from .._queue import FairQueue, Order

if TYPE_CHECKING:
    from ..._trace import StreamTrace
    from .._job import Job

__all__ = ["Gradient"]


class Gradient(Policy):
    """Finds the concurrency where the server's throughput stops growing and TTFT climbs."""

    name = "gradient"

    def __init__(
        self,
        start: int = 4,
        *,
        min_limit: int = 1,
        max_limit: int = 512,
        tolerance: float = 3.0,
        window_time: float = 2.0,
        min_steps: float = 20.0,
        margin: float = 4.0,
        order: Order = "shortest",
        interval: float = 0.0,
    ) -> None:
        super().__init__()
        self.value = float(max(start, min_limit))
        self.min_limit, self.max_limit = min_limit, max_limit
        self.tolerance, self.window_time, self.order = tolerance, window_time, order
        self.min_steps, self.margin = min_steps, margin
        self.interval = interval
        self.slow_start = True
        self.windows = 0
        self.history: list[int] = []  # limit after each window
        self.baseline: float | None = None
        self._tpots: deque[float] = deque(maxlen=32)
        self._ttfts: list[float] = []
        self._tokens = 0
        self._win_start: float | None = None
        self._peak_in_flight = 0
        self._last: tuple[float, float] | None = None  # (limit, tokens/s) of the last window
        self._at_knee = 0
        self._cut_at = -math.inf
        self._strikes = 0  # windows in a row where first tokens queued
        self._burst_until, self._burst_sent = -math.inf, 0
        self._in_flight: set[int] = set()
        self._pending: dict[int, float] = {}  # in flight, no first token yet: jid -> sent
        self.knee: float | None = None  # the limit a cut settled on: the capacity seen

    def limit(self) -> int:
        return max(self.min_limit, min(self.max_limit, int(self.value)))

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        if self._win_start is None:
            self._win_start = now
        self._maybe_close(now)
        jobs = super().admit(queue, in_flight, now)
        tpot = statistics.median(self._tpots) if self._tpots else None
        if tpot and len(jobs) > 1:
            # no bursts: at most limit/8 new requests per decode step, so their prefills
            # don't pile into one step and pass for a queue
            if now >= self._burst_until:
                self._burst_until, self._burst_sent = now + tpot, 0
            room = max(1, math.ceil(self.limit() / 8)) - self._burst_sent
            for job in jobs[max(room, 0) :]:
                queue.push_front(job)
            jobs = jobs[: max(room, 0)]
            self._burst_sent += len(jobs)
        self._peak_in_flight = max(self._peak_in_flight, in_flight + len(jobs))
        return jobs

    def next_wakeup(self, now: float) -> float | None:
        pace = super().next_wakeup(now)
        if self._burst_until > now:
            pace = self._burst_until if pace is None else min(pace, self._burst_until)
        close = None if self._win_start is None else self._win_start + self.window_time
        times = [t for t in (pace, close) if t is not None and t > now]
        return min(times) if times else None

    def on_send(self, job: Job, now: float) -> None:
        self._in_flight.add(job.jid)
        self._pending[job.jid] = now

    def on_first_token(self, job: Job, now: float) -> None:
        self._pending.pop(job.jid, None)
        # samples sent before the last cut describe the old limit: they would cut twice
        if job.sent is not None and job.first_token is not None and job.sent >= self._cut_at:
            self._ttfts.append(job.first_token - job.sent)
        if len(self._ttfts) >= max(2, self.limit() // 2) and self._long_enough(now):
            self._close(now)

    def _long_enough(self, now: float) -> bool:
        """A window spans at least ``min_steps`` decode steps, so its tokens/s means something."""
        if self._win_start is None or not self._tpots:
            return True
        return now - self._win_start >= self.min_steps * statistics.median(self._tpots)

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self._pending.pop(job.jid, None)
        self._in_flight.discard(job.jid)
        for t in traces:
            self._tokens += t.output_tokens
            if t.tpot:
                self._tpots.append(t.tpot)
        self._maybe_close(now)

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self._cut(now, self.value * 0.5)

    # -- windows ---------------------------------------------------------------------------
    def _maybe_close(self, now: float) -> None:
        if self._win_start is None:
            return
        if now - self._win_start >= self.window_time or (self.slow_start and self._overdue(now)):
            self._close(now)

    def _overdue(self, now: float) -> bool:
        """Slow start overshot: several requests sent long ago still have no first token."""
        if self.baseline is None or not self._tpots or len(self._pending) < 2:
            return False
        unit = statistics.median(self._tpots)
        late = (self.tolerance * self.baseline + self.margin) * unit
        n = sum(1 for sent in self._pending.values() if now - sent > late)
        return n >= max(2, len(self._in_flight) // 10)

    def _cut(self, now: float, value: float) -> None:
        self.slow_start = False
        self.value = max(float(self.min_limit), value)
        self._cut_at = now

    def _close(self, now: float) -> None:
        start, self._win_start = self._win_start, now
        ttfts, self._ttfts = self._ttfts, []
        tokens, self._tokens = self._tokens, 0
        peak, self._peak_in_flight = self._peak_in_flight, 0
        if self.slow_start and self._overdue(now):
            # requests sent long ago still wait for a first token: the server is full
            started = len(self._in_flight) - len(self._pending)
            self.windows += 1
            self._cut(now, max(self.value * 0.5, float(started)))
            self.history.append(self.limit())
            return
        if not ttfts or start is None or now <= start:
            return
        self.windows += 1
        tpot = statistics.median(self._tpots) if self._tpots else None
        qs = sorted(x / tpot for x in ttfts) if tpot else sorted(ttfts)
        low = qs[len(qs) // 4]  # the window's unqueued TTFT, robust to a lucky sample
        if self.baseline is None or low < self.baseline:
            self.baseline = low
        else:
            self.baseline += 0.05 * (low - self.baseline)  # drifts up slowly: can't be pinned
        base = self.baseline
        queued = sum(1 for q in qs if q > self.tolerance * base and q - base > self.margin)
        share = queued / len(qs)
        rate = tokens / (now - start)
        during = self.value
        used = peak >= self.limit()  # a limit nobody reached says nothing about the server
        last = self._last
        grew = last is None or during <= last[0] or rate > 1.05 * last[1]
        # a burst's shared prefill slows one window's first tokens; a queue in the server
        # slows them window after window: cut on the second slow window in a row
        slow = queued >= 2 and share > 0.1
        self._strikes = self._strikes + 1 if slow else 0
        # slow start overshoots by up to 2x: act at once when most first tokens queued
        if self._strikes >= 2 or (self.slow_start and slow and share > 0.5):
            self._strikes = 0
            # Little's law: requests waiting in the server = arrival rate x mean extra wait;
            # and those in flight still without a first token, long overdue, are waiting too
            unit = tpot or 1.0
            extra = statistics.fmean(max(0.0, x - self.baseline * unit) for x in ttfts)
            waiting = len(ttfts) / (now - start) * extra
            late = self.tolerance * self.baseline * unit + self.margin * unit
            overdue = sum(1 for sent in self._pending.values() if now - sent > late)
            started = len(self._in_flight) - len(self._pending)  # what the server runs
            target = self.value - max(waiting, overdue) - 1.0
            if overdue and started > 0:
                target = min(target, started)
            self._cut(now, max(self.value * 0.5, target))
            self.knee = self.value  # about the server's capacity: approach it slowly
        elif used and self.slow_start and not slow:
            self.value = min(self.max_limit, self.value * 2)
        elif used and not slow:
            if grew or self._at_knee >= 4:
                self._at_knee = 0
                step = math.sqrt(self.value)
                if self.knee is not None:
                    if self.value > self.knee + 2 * step:
                        self.knee = None  # well past the old capacity, no queue: it grew
                    elif self.value + step > self.knee:
                        step = 1.0  # near the capacity found last time: one at a time
                self.value = min(self.max_limit, self.value + step)
            else:
                self._at_knee += 1  # more concurrency bought no more tokens: stay a while
        self._last = (during, rate)
        self.history.append(self.limit())

    def describe(self) -> str:
        paced = f", paced {self.interval * 1e3:.3g} ms" if self.interval else ""
        return f"gradient({self.limit()}{paced})"
