"""What ``auto`` knows: its settings and what it has seen of the server and of its requests.

Every state reads a :class:`Situation`; only :class:`~fairstream.Auto`'s event handlers write
it. A state can therefore be tested on a made-up situation, with no server and no clock.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._lag import no_lag
from ._batches import Batches
from ._refills import Refills
from ._wave import FirstWave

if TYPE_CHECKING:
    from ...._trace import StreamTrace

__all__ = ["Situation"]


class Situation:
    """``auto``'s settings and observations (times: seconds on the dispatcher's clock)."""

    def __init__(
        self,
        start: int = 8,
        *,
        just_in_time: bool = True,
        explore_every: int = 4,
        ramp_doubles: bool = True,
        first_wave: int = 16,
        gather: float = 0.005,
        handover: float = 1.0,
        sequential_wait: bool = False,
        window: int = 64,
    ) -> None:
        # -- settings
        self.start = start
        self.just_in_time = just_in_time
        self.ramp_doubles = ramp_doubles  # slow start doubles once the server is continuous
        self.handover = handover  # continuous: steps before a slot's due end its next goes
        self.sequential_wait = sequential_wait  # sequential: keep one waiting at the server
        # seconds our own event loop stalled between two times (the Dispatcher measures it)
        self.client_lag: Callable[[float, float], float] = no_lag
        # -- the server's batch size (static), once read
        self.batch_size: int | None = None
        self.batch_exact = False  # False: batch_size is a lower bound (no full batch seen)
        # -- slow start and the slots proved
        self.slow_start = True  # until a request waits inside the server
        self.offer = start  # slow start: what may be in flight
        self.peak = 0  # the most requests seen running at once: the slots the server proved
        self.proved = 0  # warm start, until the first completion: what the prior ran at once
        self.wave = FirstWave(first_wave, gather)  # cold: the first wave (_wave.py)
        self.probe = 0  # continuous: 1 while offering one above the peak, to find a slot more
        self.calm = 0  # continuous: completions to wait, after a late start, before probing
        self.misses = 0  # continuous: probes in a row that found no slot (backs ``calm`` off)
        self.below_peak = False  # slow start ended at a late start with fewer than the peak
        self.miss_peak = 0  # the peak at the last miss
        self.grew: deque[tuple[float, bool, int]] = deque(maxlen=64)  # grew: (t, late, jid)
        self.last_grew = -math.inf  # when a start last raised the peak
        self.started_sent = -math.inf  # the latest send of a request that started
        self.full_seen = 0  # slow start: what ran while one sent with them waited it out
        self.overshot: deque[float] = deque(maxlen=64)  # sends above the peak (no handover)
        self.overloads = 0  # 429/503s not yet worked off (halve the budget each)
        # -- our requests
        self.waiting: dict[int, float] = {}  # sent, no first token yet: jid -> sent
        self.waiting_len: dict[int, float] = {}  # their expected lengths
        self.runs: dict[int, float] = {}  # first token seen, not done: jid -> first token
        self.ahead: dict[int, float] = {}  # sent ahead of a slot's end: jid -> due
        self.now = 0.0  # the last admission's clock
        # -- the server's timing
        # the lowest TTFT seen (a request that found a free slot), per expected length up to
        # 16 (17: longer or unknown): an answer that fits in one chunk comes sooner
        self.fastest: dict[int, float] = {}
        self.chunk = 1  # tokens per chunk, from finished streams (a median)
        self.chunks: deque[float] = deque(maxlen=32)
        self.tpots: deque[float] = deque(maxlen=32)  # recent time per output token
        self.ends: deque[float] = deque(maxlen=64)  # when recent streams ended
        self.brief: deque[float] = deque(maxlen=64)  # first tokens of one-chunk answers
        self.wire: deque[float] = deque(maxlen=32)  # admission to sent, s (Static._due)
        self.recent: deque[StreamTrace] = deque(maxlen=window)  # for the verdict
        self.since = 0  # completions since the last verdict
        # -- a static server's batches, and refills (which disprove static batching)
        self.batches = Batches(explore_every)
        self.refills = Refills()
        self.full_next = False  # the next batch is a full one (Static._due)

    # -- readings ------------------------------------------------------------------------------
    @property
    def running(self) -> int:
        return len(self.runs)

    def step(self) -> float | None:
        """A decode step (median time per output token of recent requests), once known."""
        return statistics.median(self.tpots) if self.tpots else None

    @property
    def quickest(self) -> float:
        """The lowest TTFT of a request longer than a chunk (of any, if none yet): a server that
        sends 3 tokens a chunk sends a 2-token answer's first token 2 steps sooner than any
        longer one's, which would then all look late."""
        longer = [t for k, t in self.fastest.items() if k > self.chunk]
        return min(longer or self.fastest.values(), default=math.inf)

    def unit(self) -> float:
        """A step, bounded from below by half the quickest first token (see :meth:`late`)."""
        return max(self.step() or 0.0, self.quickest / 2)

    def late(self, ttft: float, steps: float) -> bool:
        """Did a request wait inside the server (first token ``steps`` past the quickest)?"""
        # over HTTP a busy client reads chunks in bunches, which shrinks the time per token it
        # sees; the quickest first token (about 2 steps) bounds a step from below
        return ttft > self.quickest + steps * self.unit()

    def overdue(self) -> float:
        """How long a request that competed for a running batch waits before that proves it
        full: 8 steps past the quickest first token (not our own client's delays)."""
        return self.quickest + 8 * self.unit()

    def staggered(self) -> bool:
        """Do the running requests' expected ends spread over more than 4 steps?"""
        return self.batches.staggered(self.runs, self.unit())

    @property
    def batch(self) -> int:
        """B, or while it is a lower bound the most seen running at once if more (the detector
        reads a batch whose 1-token answers ended at their first token as a smaller one)."""
        if self.batch_exact:
            return self.batch_size or 0
        return max(self.batch_size or 0, self.peak)

    def send_lead(self) -> float:
        """The time a batch takes to reach the wire: the p90 of recent requests' (0: unknown)."""
        waits = sorted(self.wire)
        return waits[int(0.9 * (len(waits) - 1))] if waits else 0.0

    def passed_over(self) -> float | None:
        """Slow start: the longest of the requests sent with one that started (in its admission,
        or before) that still wait for their first token; None if none. Such a request waits
        for a slot (or for a static server's next batch, or a later prefill chunk): what is
        sent now waits behind it, so only requests of its band go (a static server's next
        batch still fills). Over HTTP the starts of a wave of 16 short requests on an 8-slot
        server earned growth before its other half had waited 4 steps, and 8 long requests
        went to wait 15 steps there."""
        held = [self.waiting_len[j] for j, t in self.waiting.items() if t <= self.started_sent]
        return max(held) if held else None

    def held(self, sent: float, now: float, first_come: bool) -> int:
        """Slots held now, as a start sent at ``sent`` shows them: those running, one-chunk
        answers that started with it (they end at their first token, so they never show as
        running: on 2 cores a cold client reads a burst's 1-token answers 60-170 ms after
        sending them, packed within 2 ms, which read as one slot and a queue) and, on a
        continuous server (``first_come``: first come, first served), those sent before it,
        first token or not: a server that sends 3 tokens a chunk runs a request 3 steps before
        we see it (and a one-chunk answer never), so counting only first tokens undercounts."""
        window = self.unit() / 2
        held = self.running + sum(1 for t in self.brief if now - t <= window)
        if not first_come:
            return held
        return held + sum(1 for t in self.waiting.values() if t < sent)
