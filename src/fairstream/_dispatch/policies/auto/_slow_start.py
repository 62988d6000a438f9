"""``auto``'s slow start: how far a cold start grows, and the signs that end it.

A mixin of :class:`~fairstream.Auto`. Cold, ``auto`` offers a first round and grows it by one
for each start above the peak (a slot nobody freed), until a request waits for a slot; over
real HTTP most of the work is telling a slot wait from our own client's delays (a busy 2-core
client reads first tokens late and bunched). The rules, and the readings they came from, are
in ``docs/dispatcher.md``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...._trace import StreamTrace

__all__ = ["SlowStart"]


class SlowStart:
    """The slow-start half of :class:`~fairstream.Auto`."""

    kind: str
    start: int
    peak: int
    slow_start: bool
    _offer: int
    _probe: int
    _calm: int
    _misses: int
    _miss_peak: int
    _last_grew: float
    _started_sent: float
    _grew: deque[tuple[float, bool, int]]
    _brief: deque[float]
    _waiting: dict[int, float]
    _waiting_len: dict[int, float]
    _running: dict[int, float]
    _late: Callable[[float, float], bool]
    client_lag: Callable[[float, float], float]
    _unit: Callable[[], float]

    if TYPE_CHECKING:

        @property
        def _quickest(self) -> float: ...

    @property
    def running(self) -> int:
        return len(self._running)

    def _passed_over(self) -> float | None:
        """Slow start: the longest of the requests sent with one that started (in its admission,
        or before) that still wait for their first token; None if none. Such a request waits
        for a slot (or for a static server's next batch, or a later prefill chunk): what is
        sent now waits behind it, so only requests of its band go (a static server's next
        batch still fills). Over HTTP the starts of a wave of 16 short requests on an 8-slot
        server earned growth before its other half had waited 4 steps, and 8 long requests
        went to wait 15 steps there."""
        held = [self._waiting_len[j] for j, t in self._waiting.items() if t <= self._started_sent]
        return max(held) if held else None

    def _end_slow_start_if_overdue(self, now: float) -> None:
        """Slow start ends as soon as a request *is* waiting (4 steps past the quickest first
        token, none yet), not when its first token finally comes: that is a slot later, and
        meanwhile prompt starts elsewhere keep raising what is offered."""
        if not self.slow_start or not self._waiting or self._quickest == math.inf:
            return
        oldest = min(self._waiting.values())
        waited = now - oldest - self.client_lag(oldest, now)  # not our own loop's stalls
        # a start that grew the batch after it was sent: the server had room, so it waits in
        # our own client (CPU, connections), not for a slot
        if self._late(waited, 4) and self._last_grew < oldest + self._quickest:
            self.slow_start = False

    def _held(self, sent: float, now: float) -> int:
        """Slots held now, as a start sent at ``sent`` shows them: those running, one-chunk
        answers that started with it (they end at their first token, so they never show as
        running: on 2 cores a cold client reads a burst's 1-token answers 60-170 ms after
        sending them, packed within 2 ms, which read as one slot and a queue) and, on a
        continuous server (first come, first served), those sent before it, first token or not:
        a server that sends 3 tokens a chunk runs a request 3 steps before we see it (and a
        one-chunk answer never), so counting only first tokens seen undercounts its slots."""
        window = self._unit() / 2
        held = self.running + sum(1 for t in self._brief if now - t <= window)
        if self.kind != "continuous":
            return held
        return held + sum(1 for t in self._waiting.values() if t < sent)

    def _undo_growth(self, jid: int, traces: list[StreamTrace], now: float) -> None:
        """Over real HTTP the end of one stream can reach us after the first token of the
        request the server started in its slot: that start did not grow the batch.

        (A one-token request's own start is at its end: it is not such a start.)"""
        ended = min((t.last_content for t in traces if t.last_content is not None), default=now)
        while self._grew and self._grew[0][0] < ended:
            self._grew.popleft()  # before this end: not its slot (and no later end's either)
        handover = ended + 4 * self._unit()
        if not self._grew or self._grew[-1][0] > handover or self._grew[-1][2] == jid:
            return  # long after the end: a slot the server had free, not this one
        _, late, _ = self._grew.pop()
        self.peak = max(self.running, self.peak - 1)
        self._offer = max(self.start, self._offer - 1)
        if late:  # it waited for this slot after all
            self.slow_start = False
            self._full()

    def _full(self) -> None:
        """A request waited for a slot: stop probing for a while, longer after each miss."""
        if self._probe and self.kind == "continuous":
            self._misses, self._miss_peak = min(self._misses + 1, 4), self.peak
        self._probe, self._calm = 0, self.peak << self._misses

    def _unstall(self) -> None:
        """Continuous slow start grows only on a start above the peak: with the offer at the peak
        (a warm start, or one resumed) and requests churning (one always waits for its first
        token, so in flight stays at the offer) none comes, and it stays there (a 16-slot server
        run at 15 for a whole burst, over HTTP). Probe for a slot more instead."""
        if self.kind == "continuous" and self.slow_start and self._offer <= self.peak:
            self.slow_start, self._probe, self._calm = False, 1, 0
