"""``auto``: keep the server exactly full, and hold everything else in our queue, shortest first.

The limit is what the server runs now plus a budget of requests waiting at the server, as small
as the server's kind allows (what waits inside the server can no longer be reordered). What the
budget is depends on the state ``auto`` is in (``_state.py`` lists the states and their moves,
one file each):

- probing (cold): the burst's shortest band at once when longer requests follow it (up to
  ``first_wave``, once its arrivals pause for ``gather``), then a linear ramp while starts
  raise the peak (only the band of a request passed over while it waits), until a request
  waits for a slot;
- fallback (kind still unknown, the running requests ending together): the next ones just in
  time, as many as the peak, 2 steps before their end;
- continuous: the slots the server proved, nothing waiting, one probe above the peak; a slot's
  next request a step before its expected end (``_handover.py``);
- static (B from the detector): the next B of similar lengths just in time as a batch ends;
- sequential: the next one a step before the running one's expected end.

``Auto`` holds the settings, the :class:`Situation` its event handlers keep up to date, and
the current state, to which it delegates every decision. ``Auto(ttft_slo=seconds)`` also caps
what is in flight, AIMD on first tokens past the SLO, on any server but a static one.

Every rule is described, for users, in ``docs/dispatcher.md``.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...._detect import BatchingReport
from ..._policy import Policy
from ..._queue import FairQueue, Order
from .._tail import most_running
from . import _ramp
from ._base import Kind, State
from ._batches import take_band
from ._continuous import Continuous
from ._fallback import Fallback
from ._handover import sent_ahead, timed_from
from ._probing import Probing
from ._sequential import Sequential
from ._situation import Situation
from ._slo import SloCap
from ._state import (
    CONTINUOUS,
    FALLBACK,
    PROBING,
    REFILLED,
    SLOT_WAIT,
    STATIC,
    Event,
    StateName,
    next_state,
)
from ._static import Static, in_time
from ._verdict import read

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ..._job import Job

__all__ = ["Auto"]

log = logging.getLogger("fairstream.dispatch")

STATES: dict[StateName, State] = {
    s.name: s for s in (Probing(), Fallback(), Continuous(), Static(), Sequential())
}


class Auto(Policy):
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
        self.order, self.max_limit = order, max_limit
        self.check_every, self.confidence = check_every, confidence
        self.ttft_slo = ttft_slo  # seconds from send; None: fill the server (see SloCap)
        self.slo = SloCap(ttft_slo) if ttft_slo is not None else None
        self.situation = Situation(
            start,
            just_in_time=just_in_time,
            explore_every=explore_every,
            ramp_doubles=ramp_doubles,
            first_wave=first_wave,
            gather=gather,
            handover=handover,
            sequential_wait=sequential_wait,
            window=window,
        )
        # the Dispatcher sets ``client_lag`` (its loop's stalls); the situation reads it
        self.situation.client_lag = lambda since, until: self.client_lag(since, until)
        self.state: State = STATES[PROBING]
        self.report: BatchingReport | None = None
        self.changes: list[str] = []
        self.learn(prior)

    # -- what users and tests read -------------------------------------------------------------
    @property
    def kind(self) -> Kind:
        return self.state.kind

    @property
    def start(self) -> int:
        return self.situation.start

    @property
    def batch_size(self) -> int | None:
        return self.situation.batch_size

    @property
    def batch_exact(self) -> bool:
        return self.situation.batch_exact

    @property
    def peak(self) -> int:
        return self.situation.peak

    @property
    def slow_start(self) -> bool:
        return self.situation.slow_start

    @property
    def running(self) -> int:
        return self.situation.running

    @property
    def just_in_time(self) -> bool:
        return self.situation.just_in_time

    @just_in_time.setter
    def just_in_time(self, on: bool) -> None:
        self.situation.just_in_time = on

    @property
    def ramp_doubles(self) -> bool:
        return self.situation.ramp_doubles

    @ramp_doubles.setter
    def ramp_doubles(self, on: bool) -> None:
        self.situation.ramp_doubles = on

    @property
    def first_wave(self) -> int:
        """Cold: the most the burst's shortest band sends at once (<= ``start``: no wave)."""
        return self.situation.wave.cap

    @property
    def gather(self) -> float:
        """Cold: the pause in arrivals the first wave waits for, seconds (0: none)."""
        return self.situation.wave.gather

    @property
    def batches(self) -> int:
        """Batches sent just in time."""
        return self.situation.batches.sent

    @property
    def bands(self) -> bool:
        """Static, and cold (probing): a shared pool's first grants then go by band too, as a
        single process's first wave does, so the first process under way does not fill the
        server's first batch with its long requests before the others' short ones are in line
        (4 fresh processes on a static B=8 server: short p50 2-7x naive's, bimodal)."""
        return self.state.name in (STATIC, PROBING)

    def step(self) -> float | None:
        """A decode step (median time per output token of recent requests), once known."""
        return self.situation.step()

    # -- the limit -----------------------------------------------------------------------------
    def budget(self) -> int:
        """Requests allowed to wait at the server, for the current state."""
        s = self.situation
        wait, full = self.state.budget(s)
        # at least one, so something goes, unless something runs whose end will let it go
        return max(0 if full and s.running else 1, wait >> s.overloads)

    def limit(self) -> int:
        n = self.situation.running + self.budget()
        if self.slo is not None and self.state.caps_slo:
            n = min(n, self.slo.cap)
        return max(1, min(self.max_limit, n))

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        """Jobs to send now: the current state's choice, shortest first (slow start: only the
        band of a request passed over while it waits)."""
        s = self.situation
        self._waited_out(now)
        s.now = now
        if self.order != "shortest":
            return super().admit(queue, in_flight, now)
        if not s.wave.sized and len(queue):
            if self._cold(in_flight):  # not warm (the prior told), nor with a TTFT SLO
                if s.wave.gathering(queue, now):
                    return []
                wave = s.wave.size(queue)
                s.offer = max(s.offer, wave or 0)
            s.wave.sized = True
        if s.wave.holding():  # a band below the offer: longer ones wait for the first start
            return take_band(queue, self.limit() - in_flight, now, s.wave.band)
        if s.slow_start and (held := s.passed_over()) is not None:
            return take_band(queue, self.limit() - in_flight, now, held)
        plain = lambda: Policy.admit(self, queue, in_flight, now)  # noqa: E731
        return self.state.admit(s, queue, in_flight, now, self.limit, plain)

    def _cold(self, in_flight: int) -> bool:
        """Nothing known, nothing sent: the first wave's case (not with a TTFT SLO)."""
        return self.state.name == PROBING and not in_flight and self.slo is None

    def next_wakeup(self, now: float) -> float | None:
        """When to look again: the first wave's gathering end (cold), or the current state's
        times (a batch due, a handover, requests due to end together)."""
        s = self.situation
        wake = super().next_wakeup(now)
        if (gathered := s.wave.wakeup(now)) is not None:
            return gathered if wake is None else min(wake, gathered)
        for t in [s.batches.hold_until, *self.state.wakeups(s, now)]:
            if t > now:
                wake = t if wake is None else min(wake, t)
        return wake

    # -- events --------------------------------------------------------------------------------
    def on_send(self, job: Job, now: float) -> None:
        s = self.situation
        self._refilled(now)
        self._end_slow_start_if_overdue(now)
        s.waiting[job.jid] = now
        in_flight = s.running + len(s.waiting)
        sent_ahead(s, job.jid, now, in_flight, s.peak + s.probe, self.state.hands_over)
        if in_flight > s.peak and not s.slow_start and job.jid not in s.ahead:
            s.overshot.append(now)  # a probe (not slow start's ramp, nor a handover)
        s.batches.on_send(job.jid, s.running)
        n = job.expected_tokens
        s.waiting_len[job.jid] = n if n is not None else math.inf
        if n is not None:
            s.batches.lengths_sent.append(n)
        s.batches.enqueued_sent.append(job.enqueued)

    def on_first_token(self, job: Job, now: float) -> None:
        s = self.situation
        s.wave.release()
        self._refilled(now)
        self._waited_out(now)  # before this start ends its wait
        sent = s.waiting.pop(job.jid, None)
        n = s.waiting_len.pop(job.jid, None)
        if sent is None:
            return
        continuous = self.state.name == CONTINUOUS
        if self.slo is not None:
            self.slo.sample(now - sent, sent, now, s.running + len(s.waiting) + 1)
        # a request that started after it was sent while one started earlier still runs:
        # the server refilled a running batch (static batching never does)
        s.refills.started(now, {j for j, t in s.runs.items() if t < sent})
        s.runs[job.jid] = now
        passed = sent <= s.started_sent  # sent with (or before) one that started first
        s.started_sent = max(s.started_sent, sent)
        length = math.inf if n is None else n
        s.batches.on_start(job.jid, length, s.running, sent, now)
        held = s.held(sent, now, first_come=continuous)
        grew = held > s.peak  # more run at once than ever: a slot nobody freed
        s.peak = max(s.peak, held)
        began, handed = timed_from(s, job.jid, sent, now)  # a handover waits from its due
        ttft = now - began
        waited = ttft - s.client_lag(began, now)  # not our own loop's stalls (_lag.py)
        k = 17 if length > 16 else math.ceil(length)
        if not handed:  # (its wait for the slot's end is no quickest first token)
            # our own stalls off: in a fresh process the openai SDK's first streamed call holds
            # the loop about 0.3 s, which the whole first wave's first tokens would carry
            s.fastest[k] = min(s.fastest.get(k, math.inf), waited)
        # waited for a slot: late, and it only took the place of one that ended (a wave of
        # sends that all start late but together grew the batch: that was prefill or our
        # own sending, not a full server)
        # (in the first burst of a warm start, below what prior traffic ran at once, it did not
        # wait for a slot: a burst's first tokens spread over its prefills and our sending;
        # over HTTP the prior can overstate the slots, so this ends at the first completion)
        # and a slot (or batch) frees only at an end: with none since it was sent, a late start
        # was our own client or the server's CPU (64 streams on 2 cores), not a full server
        freed = any(sent <= e <= now for e in s.ends)
        # converged on a continuous server, 2 steps: one request always waiting at the server
        # for the next slot's end shows only so, and costs every start its 4-step SLO
        steady = continuous and not s.slow_start
        full = s.late(waited, 2 if steady else 3) and not grew and freed
        full = full and s.running >= s.proved
        # a probe is dropped sooner: a request 2 steps late already paid for the slot it sought
        full = full or (s.probe > 0 and not grew and freed and s.late(waited, 2))
        if full:
            # below the peak it was no slot wait on a continuous server: a static one's next
            # batch, or our own sending (see :meth:`_become`); not after 8 steps late (a slot
            # wait, its slot's end read late: an 8-slot server's second round of a burst)
            if s.slow_start:  # what ended it (a later late start does not change that)
                s.below_peak = s.running < s.peak and not s.late(waited, 8)
                if passed:  # it waited while a full batch (or every slot) ran: B, if static
                    s.full_seen = s.peak
            self._ramp_ends()
            _ramp.miss(s, continuous)  # the server is full: probe again later
            # fewer slots, unless a probe sent within a step after it overtook it over HTTP
            overtaken = any(sent <= t <= sent + s.unit() for t in s.overshot)
            if continuous and s.late(waited, 2 if steady else 4) and not overtaken:
                s.peak = max(s.running, s.peak - 1)
        elif s.slow_start and grew:
            # a slot nobody freed: one more may wait; two once the server has refilled (it is
            # continuous, so what waits costs slots, never a batch's mix): a doubling per round
            s.offer += 2 if continuous and s.ramp_doubles else 1
        elif grew:
            # a slot more was there: probe on, one more for each start that found one (a
            # doubling per round, up to a quarter of the peak: a 64-slot server whose slow
            # start a busy client ended at 16 took 1.5 s to reach 26, one slot a round); near
            # the last miss's peak one at a time (a late end's race there is no free slot, and
            # a wider probe would make requests wait at the server)
            if s.peak > s.miss_peak + 1:  # two past the last miss: not a late end's race
                s.misses = 0
                s.probe = min(s.probe + 1, max(1, s.peak // 4))
            else:
                s.probe = 1
        self._end_slow_start_if_overdue(now)
        if grew:
            s.last_grew = now
            s.grew.append((now, s.late(waited, 3), job.jid))

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        s = self.situation
        s.wave.release()
        self._refilled(now, job.jid)
        s.waiting.pop(job.jid, None)
        s.ahead.pop(job.jid, None)
        s.waiting_len.pop(job.jid, None)
        first = s.runs.pop(job.jid, None)
        ran = first is not None
        if first is not None and now - first <= s.unit() / 2:
            s.brief.append(first)  # a one-chunk answer: it ran, for a step (see Situation.held)
        s.batches.on_end(job.jid, s.running)
        ends = [t.last_content for t in traces if t.last_content is not None]
        s.ends.append(min(ends, default=now))
        if ran and not s.running and self._b_lower_bound():
            size = s.batches.full(s.waiting, s.batch_size or 0, s.quickest)
            self._exact(size, "a full batch ran, others waited")
        s.proved = 0  # past the first burst late starts count again (the prior can be high)
        if _ramp.undo_growth(s, job.jid, traces, now):  # it waited for this slot after all
            self._ramp_ends()
            _ramp.miss(s, self.state.name == CONTINUOUS)
        if job.ok and s.overloads:
            s.overloads -= 1
        s.recent.extend(t for t in traces if t.outcome == "ok")
        self._note_wire(job, traces)
        s.tpots.extend(t.tpot for t in traces if t.tpot)
        for t in traces:
            if len(t.content_chunk_times) > 1:
                s.chunks.append(t.output_tokens / len(t.content_chunk_times))
        if s.chunks:
            s.chunk = max(1, round(statistics.median(s.chunks)))
        if s.probe == 0 and self.state.name == CONTINUOUS and not s.slow_start:
            s.calm -= 1
            s.probe = int(s.calm <= 0)
        s.since += 1
        if s.since >= (1 if self.kind == "unknown" else self.check_every):
            s.since = 0
            self.recheck()

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self.situation.overloads = min(self.situation.overloads + 1, 8)
        self.situation.wave.release()

    def learn(self, traces: Iterable[StreamTrace]) -> None:
        """Start from traffic already seen (an instrumented app's traces, a probe's, an earlier
        run's): the detector's confident verdict sets the kind (and B), and the most requests
        seen running at once are slots proved on any kind (one burst that fit the server looks
        the same on a static and a continuous one): slow start offers that many at once (or
        ``start``, if more: a probe runs only a few at once) and goes on growing from there."""
        s = self.situation
        ok = [t for t in traces if t.outcome == "ok"]
        if not ok:
            return
        s.tpots.extend(t.tpot for t in ok if t.tpot)
        # judged on their own and not kept for later checks: another recorder's traces count
        # time from another origin, and mixed with ours they would make up overlaps
        self.recheck(deque(ok, maxlen=s.recent.maxlen))
        s.proved = most_running(ok)
        s.offer = max(s.offer, s.proved)  # slow start goes on from there
        if self.state.name == CONTINUOUS:
            s.peak = max(s.peak, s.proved)
        self._unstall()

    def recheck(self, traces: Iterable[StreamTrace] | None = None) -> None:
        """Analyze the recent traces (or ``traces``); move if a confident verdict says so."""
        s = self.situation
        self.report, verdict = read(
            s.recent if traces is None else traces, s, self.kind, self.confidence
        )
        if verdict is None:
            return
        if verdict.event == "saw static":
            s.batch_size, s.batch_exact = verdict.batch_size, verdict.batch_exact
        self._move(verdict.event, self.report.summary)

    def describe(self) -> str:
        return f"auto: {self.state.label(self.situation)} (limit {self.limit()})"

    # -- moves ---------------------------------------------------------------------------------
    def _move(self, event: Event, why: str) -> None:
        """Take ``event``'s transition (``_state.py``), if it has one here, and log it."""
        target = next_state(self.state.name, event)
        if target is None:
            return
        s, before = self.situation, self.describe()
        if target == CONTINUOUS and self.state.name in (PROBING, FALLBACK) and s.below_peak:
            # what ended slow start (a late start with fewer running than the peak, just after
            # others ended) was read as a static server's next batch: on a continuous one it
            # was our own sending (a round of 15 sends on 2 cores), so ramp on, from the peak:
            # growth earned before it (an 8-slot server's first 8 starts offered 24) would
            # send a round to wait there
            s.slow_start, s.below_peak = True, False
            s.offer = min(s.offer, s.peak + 2)
        self.state = STATES[target]
        self._unstall()
        if event != SLOT_WAIT:
            self._log_change(f"{before} -> {self.describe()}: {why}")

    def _ramp_ends(self) -> None:
        """A request waited inside the server: slow start is over (in probing, a move)."""
        self.situation.slow_start = False
        self._move(SLOT_WAIT, "a request waited for a slot")

    def _end_slow_start_if_overdue(self, now: float) -> None:
        if _ramp.overdue(self.situation, now):
            self._ramp_ends()

    def _unstall(self) -> None:
        """Continuous slow start grows only on a start above the peak: with the offer at the peak
        (a warm start, or one resumed) and requests churning (one always waits for its first
        token, so in flight stays at the offer) none comes, and it stays there (a 16-slot server
        run at 15 for a whole burst, over HTTP). Probe for a slot more instead."""
        s = self.situation
        if self.state.name == CONTINUOUS and s.slow_start and s.offer <= s.peak:
            s.slow_start, s.probe, s.calm = False, 1, 0

    def _refilled(self, now: float, ended: int | None = None) -> None:
        """Count the refills ``now`` confirms (2 steps' slack, 30 ms at least: client stamps'
        jitter); two decide the server is continuous."""
        s = self.situation
        if s.refills.pending and s.refills.seen(now, max(2 * s.unit(), 0.03), ended):
            s.batches.explore = self.state.name == STATIC and in_time(s)  # look again at once
            if s.refills.count >= 2:
                self._move(REFILLED, "requests started while earlier ones still ran")

    # -- a static server's B -------------------------------------------------------------------
    def _b_lower_bound(self) -> bool:
        return self.state.name == STATIC and not self.situation.batch_exact

    def _waited_out(self, now: float) -> None:
        """B is exact once a request that competed for the running batch has waited 8 steps while
        as many ran as ever did (a batch's 1-token answers end at their first token: fewer run)."""
        s = self.situation
        if self._b_lower_bound() and s.batch_size:
            size = s.batches.waited_out(s.waiting, s.batch, s.overdue(), now)
            self._exact(size, "a full batch ran while a request sent with it waited")

    def _exact(self, size: int | None, why: str) -> None:
        if size is not None:
            before = self.describe()
            self.situation.batch_size, self.situation.batch_exact = size, True
            self._log_change(f"{before} -> {self.describe()}: {why}")

    def _note_wire(self, job: Job, traces: list[StreamTrace]) -> None:
        """How long after its admission ``job``'s request was sent (each clock's own origin)."""
        t = traces[0] if traces else None
        if t is not None and t.sent is not None and t.enqueued is not None and job.sent:
            self.situation.wire.append(max(0.0, (t.sent - t.enqueued) - (job.sent - job.enqueued)))

    def _log_change(self, msg: str) -> None:
        self.changes.append(msg)
        log.info("dispatcher policy %s", msg)
