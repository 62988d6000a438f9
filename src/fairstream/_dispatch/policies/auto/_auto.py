"""``auto``: keep the server exactly full, and hold everything else in our queue, shortest first.

The limit is what the server runs now plus a budget of requests waiting at the server, as small
as the server's kind allows (what waits inside the server can no longer be reordered):

- slow start (cold): the burst's shortest band at once when longer requests follow it (up to
  ``first_wave``, once its arrivals pause for ``gather``), then a linear ramp while starts
  raise the peak (only the band of a request passed over while it waits), until a request
  waits for a slot;
- kind still unknown, the running requests ending together: the next ones just in time, as
  many as the peak, 2 steps before their end (a continuous server running a burst in bands
  looks static);
- continuous: the slots the server proved, nothing waiting, one probe above the peak; a
  slot's next request a step before its expected end (``_handover.py``);
- static (B from the detector): the next B of similar lengths just in time as a batch ends
  (a partial batch of long ones held while requests keep arriving);
- sequential: the next one a step before the running one's expected end (at its end if that
  is unknown), so it is chosen from all that arrived by then.

``Auto(ttft_slo=seconds)`` also caps what is in flight, AIMD on first tokens past the SLO, on
any server but a static one: where filling the server costs first tokens the SLO (a
prefill-heavy mix), it keeps goodput at the cost of makespan.

Every rule is described, for users, in ``docs/dispatcher.md``.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...._detect import BatchingReport
from ..._policy import Policy
from ..._queue import FairQueue, Order
from .._tail import critical_first, most_running
from ._batches import Batches, take_band
from ._deciding import Deciding, Kind
from ._handover import Handover
from ._just_in_time import JustInTime
from ._refills import Refills
from ._slo import SloCap
from ._slow_start import SlowStart
from ._wave import FirstWave

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ..._job import Job

__all__ = ["Auto"]


class Auto(Deciding, SlowStart, JustInTime, Handover, Policy):
    """Fills the server to what it runs; holds the rest shortest-first (docs/dispatcher.md)."""

    name = "auto"
    reads_client_lag = True  # a first token late by our own stalls is no slot wait

    def __init__(
        self,
        start: int = 8,
        *,
        order: Order = "shortest",
        check_every: int = 8,
        window: int = 64,
        confidence: float = 0.7,
        max_limit: int = 4096,
        prior: Iterable[StreamTrace] = (),
        just_in_time: bool = True,
        explore_every: int = 4,
        ramp_doubles: bool = True,
        ttft_slo: float | None = None,
        first_wave: int = 16,
        gather: float = 0.005,
        handover: float = 1.0,
        sequential_wait: bool = False,
    ) -> None:
        super().__init__()
        if ttft_slo is not None and ttft_slo <= 0:
            raise ValueError(f"ttft_slo must be > 0 seconds, not {ttft_slo!r}")
        if not handover >= 0:  # (NaN too)
            raise ValueError(f"handover must be >= 0 steps (0: off), not {handover!r}")
        self.start, self.order, self.max_limit = start, order, max_limit
        self.ttft_slo = ttft_slo  # seconds from send; None: fill the server (see SloCap)
        self._slo = SloCap(ttft_slo) if ttft_slo is not None else None
        self.just_in_time = just_in_time
        self.handover = handover  # continuous: steps before a slot's due end its next goes
        self.sequential_wait = sequential_wait  # sequential: keep one waiting at the server
        self._ahead: dict[int, float] = {}  # sent ahead of a slot's end: jid -> due
        self.ramp_doubles = ramp_doubles  # slow start doubles once the server is continuous
        self._batches = Batches(explore_every)
        self.check_every, self.confidence = check_every, confidence
        self.kind: Kind = "unknown"
        self.batch_size: int | None = None
        self.batch_exact = False  # False: batch_size is a lower bound (no full batch seen)
        self.report: BatchingReport | None = None
        self.changes: list[str] = []
        self._refills = Refills()  # static batching never refills a running batch
        self.peak = 0  # the most requests seen running at once: the slots the server proved
        self._proved = 0  # warm start, until the first completion: what the prior ran at once
        self.slow_start = True  # until a request waits inside the server
        self._offer = start  # slow start: what may be in flight
        self._wave = FirstWave(first_wave, gather)  # cold: the first wave (_wave.py)
        self._probe = 0  # continuous: 1 while offering one above the peak, to find a slot more
        self._calm = 0  # continuous: completions to wait, after a late start, before probing
        self._misses = 0  # continuous: probes in a row that found no slot (backs ``_calm`` off)
        self._below_peak = False  # slow start ended at a late start with fewer than the peak
        self._miss_peak = 0  # the peak at the last miss
        self._grew: deque[tuple[float, bool, int]] = deque(maxlen=64)  # grew: (t, late, jid)
        self._waiting: dict[int, float] = {}  # sent, no first token yet: jid -> sent
        self._waiting_len: dict[int, float] = {}  # their expected lengths
        self._running: dict[int, float] = {}  # first token seen, not done: jid -> first token
        self._recent: deque[StreamTrace] = deque(maxlen=window)
        self._since = 0
        self._overloads = 0
        # the lowest TTFT seen (a request that found a free slot), per expected length up to
        # 16 (17: longer or unknown): an answer that fits in one chunk comes sooner
        self._fastest: dict[int, float] = {}
        self._chunk = 1  # tokens per chunk, from finished streams (a median)
        self._chunks: deque[float] = deque(maxlen=32)
        self._last_grew = -math.inf  # when a start last raised the peak
        self._tpots: deque[float] = deque(maxlen=32)  # recent time per output token
        self._ends: deque[float] = deque(maxlen=64)  # when recent streams ended
        self._brief: deque[float] = deque(maxlen=64)  # first tokens of one-chunk answers
        self._now = 0.0  # the last admission's clock (:meth:`_due_slots`)
        self._started_sent = -math.inf  # the latest send of a request that started
        self._full_seen = 0  # slow start: what ran while one sent with them waited it out
        self._overshot: deque[float] = deque(maxlen=64)  # sends above the peak (no handover)
        self._wire: deque[float] = deque(maxlen=32)  # admission to sent, s (_just_in_time.py)
        self._full_next = False  # the next batch is a full one (_just_in_time.py)
        self.learn(prior)

    # -- the limit -----------------------------------------------------------------------------
    def budget(self) -> int:
        """Requests allowed to wait at the server, for the server's kind."""
        run, soon = self.running, self._due_slots()
        if self.slow_start and self.kind in ("unknown", "continuous"):
            b = max(0, self._offer - run)  # in flight <= offer, +1 a start above the peak
        elif self.kind == "continuous":  # the slots it proved (+1 while probing), and handovers
            b = max(self.peak - run, 0) + self._probe + self._handovers()
        elif self._in_time():  # the next batch when this one ends (or explores)
            size = self._batch or self.start
            if not self.batch_exact:  # a lower bound: twice it, so a full batch shows
                size *= 2
            b = self._next_batch(size) if run else size
        elif self.kind == "static":  # a full batch waiting when the running one ends
            size = self._batch or self.start
            b = max(run, size if self.batch_exact else 2 * size)  # a lower bound: probe
        elif self.kind == "sequential":  # the next one as the running one is due to end
            b = 1 if self.sequential_wait or not run else self._handovers()
        elif soon is not None:  # unknown, full, ending together: refill them in time
            b = max(0, self.peak - run + soon)
        else:  # a request waited inside: offer the largest wave again (static: the next batch)
            b = max(self.start, run, self.peak)
        # at least one, so something goes, unless something runs whose end will let it go:
        # a continuous server at its peak, a static batch just in time (one more would wait)
        full = self._in_time() or (self.kind == "continuous" and not self.slow_start)
        full = full or soon is not None or (self.kind == "sequential" and not self.sequential_wait)
        return max(0 if full and run else 1, b >> self._overloads)

    def limit(self) -> int:
        n = self.running + self.budget()
        if self._slo is not None and self.kind != "static":  # a batch's wait is not ours to cut
            n = min(n, self._slo.cap)
        return max(1, min(self.max_limit, n))

    @property
    def first_wave(self) -> int:
        """Cold: the most the burst's shortest band sends at once (<= ``start``: no wave)."""
        return self._wave.cap

    @property
    def gather(self) -> float:
        """Cold: the pause in arrivals the first wave waits for, seconds (0: none)."""
        return self._wave.gather

    @property
    def batches(self) -> int:
        """Batches sent just in time."""
        return self._batches.sent

    @property
    def bands(self) -> bool:
        return self.kind == "static"

    def step(self) -> float | None:
        """A decode step (median time per output token of recent requests), once known."""
        return statistics.median(self._tpots) if self._tpots else None

    def _late(self, ttft: float, steps: float) -> bool:
        """Did a request wait inside the server (first token ``steps`` past the quickest)?"""
        # over HTTP a busy client reads chunks in bunches, which shrinks the time per token it
        # sees; the quickest first token (about 2 steps) bounds a step from below
        return ttft > self._quickest + steps * self._unit()

    @property
    def _quickest(self) -> float:
        """The lowest TTFT of a request longer than a chunk (of any, if none yet): a server that
        sends 3 tokens a chunk sends a 2-token answer's first token 2 steps sooner than any
        longer one's, which would then all look late."""
        longer = [t for k, t in self._fastest.items() if k > self._chunk]
        return min(longer or self._fastest.values(), default=math.inf)

    def _unit(self) -> float:
        """A step, bounded from below by half the quickest first token (see :meth:`_late`)."""
        return max(self.step() or 0.0, self._quickest / 2)

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        """Static: a request joins the batch waiting at the server only within 2x of its
        longest (or of 16 tokens), so short requests are not stretched to a long one's length.
        Continuous: see :meth:`_admit_critical_first`."""
        self._waited_out(now)
        self._now = now
        if self.order != "shortest":
            return super().admit(queue, in_flight, now)
        if not self._wave.sized and len(queue):
            if self._cold(in_flight):  # not warm (the prior told), nor with a TTFT SLO
                if self._wave.gathering(queue, now):
                    return []
                wave = self._wave.size(queue)
                self._offer = max(self._offer, wave or 0)
            self._wave.sized = True
        if self.slow_start and (held := self._passed_over()) is not None:
            return take_band(queue, self.limit() - in_flight, now, held)
        if self.kind == "continuous":
            return self._admit_critical_first(queue, in_flight, now)
        if self.kind != "static":
            return super().admit(queue, in_flight, now)
        return self._admit_batch(queue, in_flight, now)

    def _cold(self, in_flight: int) -> bool:
        """Nothing known, nothing sent: the first wave's case (not with a TTFT SLO)."""
        return self.kind == "unknown" and self.slow_start and not in_flight and self._slo is None

    def next_wakeup(self, now: float) -> float | None:
        """Just in time: when the running batch is due to end, less a few steps (cold: when
        the first wave's gathering ends)."""
        wake = super().next_wakeup(now)
        if (gathered := self._wave.wakeup(now)) is not None:
            return gathered if wake is None else min(wake, gathered)
        for t in [*self._batch_wakeups(), self._slots_due_at(), self._handover_at(now)]:
            if t > now:
                wake = t if wake is None else min(wake, t)
        return wake

    def _admit_critical_first(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        """Continuous: shortest first, but long-first at a burst's tail (see ``critical_first``:
        once nothing has arrived for 4 steps)."""
        room = self.limit() - in_flight
        return critical_first(queue, room, now, self.peak, 4 * self._unit())

    # -- events --------------------------------------------------------------------------------
    def on_send(self, job: Job, now: float) -> None:
        self._refilled(now)
        self._end_slow_start_if_overdue(now)
        self._waiting[job.jid] = now
        in_flight = self.running + len(self._waiting)
        self._sent_ahead(job.jid, now, in_flight, self.peak + self._probe)
        if in_flight > self.peak and not self.slow_start and job.jid not in self._ahead:
            self._overshot.append(now)  # a probe (not slow start's ramp, nor a handover)
        self._batches.on_send(job.jid, self.running)
        n = job.expected_tokens
        self._waiting_len[job.jid] = n if n is not None else math.inf
        if n is not None:
            self._batches.lengths_sent.append(n)

    def on_first_token(self, job: Job, now: float) -> None:
        self._refilled(now)
        self._waited_out(now)  # before this start ends its wait
        sent = self._waiting.pop(job.jid, None)
        n = self._waiting_len.pop(job.jid, None)
        if sent is None:
            return
        if self._slo is not None:
            self._slo.sample(now - sent, sent, now, self.running + len(self._waiting) + 1)
        # a request that started after it was sent while one started earlier still runs:
        # the server refilled a running batch (static batching never does)
        self._refills.started(now, {j for j, t in self._running.items() if t < sent})
        self._running[job.jid] = now
        passed = sent <= self._started_sent  # sent with (or before) one that started first
        self._started_sent = max(self._started_sent, sent)
        length = math.inf if n is None else n
        self._batches.on_start(job.jid, length, self.running, sent, now)
        held = self._held(sent, now)
        grew = held > self.peak  # more run at once than ever: a slot nobody freed
        self.peak = max(self.peak, held)
        began, handed = self._timed_from(job.jid, sent, now)  # a handover waits from its due
        ttft = now - began
        waited = ttft - self.client_lag(began, now)  # not our own loop's stalls (_lag.py)
        k = 17 if length > 16 else math.ceil(length)
        if not handed:  # (its wait for the slot's end is no quickest first token)
            self._fastest[k] = min(self._fastest.get(k, math.inf), ttft)
        # waited for a slot: late, and it only took the place of one that ended (a wave of
        # sends that all start late but together grew the batch: that was prefill or our
        # own sending, not a full server)
        # (in the first burst of a warm start, below what prior traffic ran at once, it did not
        # wait for a slot: a burst's first tokens spread over its prefills and our sending;
        # over HTTP the prior can overstate the slots, so this ends at the first completion)
        # and a slot (or batch) frees only at an end: with none since it was sent, a late start
        # was our own client or the server's CPU (64 streams on 2 cores), not a full server
        freed = any(sent <= e <= now for e in self._ends)
        # converged on a continuous server, 2 steps: one request always waiting at the server
        # for the next slot's end shows only so, and costs every start its 4-step SLO
        steady = self.kind == "continuous" and not self.slow_start
        full = self._late(waited, 2 if steady else 3) and not grew and freed
        full = full and self.running >= self._proved
        # a probe is dropped sooner: a request 2 steps late already paid for the slot it sought
        full = full or (self._probe > 0 and not grew and freed and self._late(waited, 2))
        if full:
            # below the peak it was no slot wait on a continuous server: a static one's next
            # batch, or our own sending (see :meth:`_become`); not after 8 steps late (a slot
            # wait, its slot's end read late: an 8-slot server's second round of a burst)
            if self.slow_start:  # what ended it (a later late start does not change that)
                self._below_peak = self.running < self.peak and not self._late(waited, 8)
                if passed:  # it waited while a full batch (or every slot) ran: B, if static
                    self._full_seen = self.peak
            self.slow_start = False
            self._full()  # the server is full: probe again later
            # fewer slots, unless a probe sent within a step after it overtook it over HTTP
            overtaken = any(sent <= t <= sent + self._unit() for t in self._overshot)
            if (
                self.kind == "continuous"
                and self._late(waited, 2 if steady else 4)
                and not overtaken
            ):
                self.peak = max(self.running, self.peak - 1)
        elif self.slow_start and grew:
            # a slot nobody freed: one more may wait; two once the server has refilled (it is
            # continuous, so what waits costs slots, never a batch's mix): a doubling per round
            self._offer += 2 if self.kind == "continuous" and self.ramp_doubles else 1
        elif grew:
            # a slot more was there: probe on, one more for each start that found one (a
            # doubling per round, up to a quarter of the peak: a 64-slot server whose slow
            # start a busy client ended at 16 took 1.5 s to reach 26, one slot a round); near
            # the last miss's peak one at a time (a late end's race there is no free slot, and
            # a wider probe would make requests wait at the server)
            if self.peak > self._miss_peak + 1:  # two past the last miss: not a late end's race
                self._misses = 0
                self._probe = min(self._probe + 1, max(1, self.peak // 4))
            else:
                self._probe = 1
        self._end_slow_start_if_overdue(now)
        if grew:
            self._last_grew = now
            self._grew.append((now, self._late(waited, 3), job.jid))

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self._refilled(now, job.jid)
        self._waiting.pop(job.jid, None)
        self._ahead.pop(job.jid, None)
        self._waiting_len.pop(job.jid, None)
        first = self._running.pop(job.jid, None)
        ran = first is not None
        if first is not None and now - first <= self._unit() / 2:
            self._brief.append(first)  # a one-chunk answer: it ran, for a step (see _held)
        self._batches.on_end(job.jid, self.running)
        ends = [t.last_content for t in traces if t.last_content is not None]
        self._ends.append(min(ends, default=now))
        if ran and not self.running and self._b_lower_bound():
            size = self._batches.full(self._waiting, self.batch_size or 0, self._quickest)
            self._exact(size, "a full batch ran, others waited")
        self._proved = 0  # past the first burst late starts count again (the prior can be high)
        self._undo_growth(job.jid, traces, now)
        if job.ok and self._overloads:
            self._overloads -= 1
        self._recent.extend(t for t in traces if t.outcome == "ok")
        self._note_wire(job, traces)
        self._tpots.extend(t.tpot for t in traces if t.tpot)
        for t in traces:
            if len(t.content_chunk_times) > 1:
                self._chunks.append(t.output_tokens / len(t.content_chunk_times))
        if self._chunks:
            self._chunk = max(1, round(statistics.median(self._chunks)))
        if self._probe == 0 and self.kind == "continuous" and not self.slow_start:
            self._calm -= 1
            self._probe = int(self._calm <= 0)
        self._since += 1
        if self._since >= (1 if self.kind == "unknown" else self.check_every):
            self._since = 0
            self.recheck()

    def _refilled(self, now: float, ended: int | None = None) -> None:
        """Count the refills ``now`` confirms (2 steps' slack, 30 ms at least: client stamps'
        jitter); two decide the server is continuous."""
        if self._refills.pending and self._refills.seen(now, max(2 * self._unit(), 0.03), ended):
            self._batches.explore = self._in_time()  # look again at once
            if self._refills.count >= 2 and self.kind in ("unknown", "static"):
                self._become("continuous", "requests started while earlier ones still ran")

    def _overdue(self) -> float:
        """How long a request that competed for a running batch waits before that proves it
        full: 8 steps past the quickest first token (not our own client's delays)."""
        return self._quickest + 8 * self._unit()

    def learn(self, traces: Iterable[StreamTrace]) -> None:
        """Start from traffic already seen (an instrumented app's traces, a probe's, an earlier
        run's): the detector's confident verdict sets the kind (and B), and the most requests
        seen running at once are slots proved on any kind (one burst that fit the server looks
        the same on a static and a continuous one): slow start offers that many at once (or
        ``start``, if more: a probe runs only a few at once) and goes on growing from there."""
        ok = [t for t in traces if t.outcome == "ok"]
        if not ok:
            return
        self._tpots.extend(t.tpot for t in ok if t.tpot)
        # judged on their own and not kept for later checks: another recorder's traces count
        # time from another origin, and mixed with ours they would make up overlaps
        self.recheck(deque(ok, maxlen=self._recent.maxlen))
        self._proved = most_running(ok)
        self._offer = max(self._offer, self._proved)  # slow start goes on from there
        if self.kind == "continuous":
            self.peak = max(self.peak, self._proved)
        self._unstall()

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self._overloads = min(self._overloads + 1, 8)

    def describe(self) -> str:
        size = f", B={self.batch_size}" if self.kind == "static" and self.batch_size else ""
        return f"auto: {self.kind}{size} (limit {self.limit()})"
