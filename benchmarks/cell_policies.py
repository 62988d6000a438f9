"""``matrix_cell.py``'s ``auto``: watched (what it saw at each send, its starts), and the
variants tried against it side by side, each kept to compare against the shipped rule.

- ``auto-any-pause``: the long-first rule firing at any 4-step pause in arrivals;
- ``auto-seq-wait``: one request kept waiting at a sequential server;
- ``auto-fcfs-gap``: a continuous start counts only waiting requests sent a quickest first
  token before it as holding slots;
- ``auto-cap<f>``: slow start's sends above the proven slots kept to ``f`` x the peak
  (``auto-ccap<f>``: once the server is known continuous);
- ``auto-churn``: a continuous server's probe made larger by the requests that end within a
  first token's time, and a late start read as a slot wait only with the peak (less one)
  running (``auto-churn-norun``: the probe alone);
- ``auto-rounds``: probing in rounds of the churn and one more, judged by growth;
- ``auto-floor<N>``: the peak held at N or more once slow start ends on a continuous server
  (what a right slot count would give);
- ``auto:k=v+k=v``: ``Auto(k=v, ...)``; ``auto-no-handover``: ``Auto(handover=0)``.
"""

from __future__ import annotations

import ast
import math
import statistics
from collections import deque
from typing import Any

from fairstream import Auto
from fairstream._dispatch._tail import critical_first


class WatchedAuto(Auto):
    """``auto`` that keeps its starts: (sent, first token, its late threshold then), and what
    it saw at each send (``--sends``)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.starts: list[tuple[float, float, float]] = []
        self.sends: list[str] = []
        self._t0: float | None = None

    def on_send(self, job: Any, now: float) -> None:
        self._t0 = now if self._t0 is None else self._t0
        due = self._handovers()
        super().on_send(job, now)
        self.sends.append(
            f"    {now - self._t0:6.3f} s  {'slow start' if self.slow_start else self.kind:<10}"
            f" peak {self.peak:3d} offer {self._offer:3d} probe {self._probe} handovers {due:2d}"
            f"  running {self.running:3d} waiting {len(self._waiting):3d}"
            f"  length {job.expected_tokens}"
        )

    def on_first_token(self, job: Any, now: float) -> None:
        sent = self._waiting.get(job.jid)
        if sent is not None:
            self.starts.append((sent, now, self._quickest + 3 * self._unit()))
        super().on_first_token(job, now)


class FcfsGapAuto(WatchedAuto):
    """Experiment: on a continuous server a start counts a request sent before it
    that still waits as holding a slot only if sent a quickest first token earlier (the sends
    of one admission reach the server in any order)."""

    def _held(self, sent: float, now: float) -> int:
        held = super()._held(sent, now)
        if self.kind != "continuous":
            return held
        lately = sent - self._quickest  # sent with it, or just before: not counted
        return held - sum(1 for t in self._waiting.values() if lately <= t < sent)


class CappedAuto(WatchedAuto):
    """Experiment: slow start keeps at most ``cap`` x peak sends above the slots it proved."""

    def __init__(
        self, cap: float = 0.5, kinds: tuple[str, ...] = ("unknown", "continuous"), **options: Any
    ) -> None:
        super().__init__(**options)
        self.cap, self.kinds = cap, kinds

    def budget(self) -> int:
        b = super().budget()
        if self.slow_start and self.kind in self.kinds and self.peak:
            free = max(self.peak - self.running, 0)
            b = min(b, free + max(1, int(self.cap * self.peak)))
        return b


class AnyPauseAuto(WatchedAuto):
    """``auto`` with a looser long-first rule, side by side with the shipped one: the rule of
    a burst's tail fires at any pause of 4 steps in arrivals (an open loop's too)."""

    def _admit_critical_first(self, queue: Any, in_flight: int, now: float) -> list[Any]:
        room = self.limit() - in_flight
        return critical_first(queue, room, now, self.peak, 4 * self._unit(), math.inf)


class ChurnAuto(WatchedAuto):
    """Experiment: on a continuous server, past slow start, a probe is also as
    many requests as end within a first token's time (ends per second x the recent median
    TTFT), so that more run at once than the peak despite the churn (a start proves a slot
    only when more hold slots than ever: with as many ending as starting, a probe of one never
    shows); with ``guard``, a late start there proves a full server only with at least the
    peak less one running (fewer: slots were free, it waited in our client or in transit)."""

    def __init__(self, guard: bool = True, **options: Any) -> None:
        super().__init__(**options)
        self.guard = guard
        self._ttfts: deque[float] = deque(maxlen=16)
        self._not_late = False

    def churn(self) -> int:
        if not self._ttfts or len(self._ends) < 4:
            return 0
        ttft = statistics.median(self._ttfts)
        window = max(0.1, 8 * ttft)
        ended = sum(1 for e in self._ends if e >= self._now - window)
        return math.ceil(ended / window * ttft)

    def budget(self) -> int:
        b = super().budget()
        if self.kind == "continuous" and not self.slow_start and self._probe > 0:
            b += self.churn()
        return b

    def _late(self, ttft: float, steps: float) -> bool:
        return False if self._not_late else super()._late(ttft, steps)

    def on_first_token(self, job: Any, now: float) -> None:
        sent = self._waiting.get(job.jid)
        if sent is not None:
            self._ttfts.append(now - sent)
            steady = self.kind == "continuous" and not self.slow_start
            self._not_late = self.guard and steady and self.running + 1 < self.peak - 1
        try:
            super().on_first_token(job, now)
        finally:
            self._not_late = False


class FloorAuto(WatchedAuto):
    """Experiment: the peak held at ``floor`` or more once slow start has ended
    on a continuous server: what ``auto`` would do if it knew the slots (or more)."""

    def __init__(self, floor: int = 64, **options: Any) -> None:
        super().__init__(**options)
        self.floor = floor

    def on_first_token(self, job: Any, now: float) -> None:
        super().on_first_token(job, now)
        if self.kind == "continuous" and not self.slow_start:
            self.peak = max(self.peak, self.floor)


class RoundAuto(ChurnAuto):
    """Experiment: on a continuous server, past slow start, probing goes in rounds
    judged by growth, not by late starts: while requests wait in our queue and the probe is on,
    a round sends the churn and one more above the peak; after two first tokens' time it
    succeeded if the peak grew (the next round follows), else the server is full there: the
    probe stops for ``peak`` completions, doubled after each failed round (up to 16x). A late
    start sent within a round proves nothing (over a busy 2-core client half the starts are
    "late"); outside rounds the late-start rules stand."""

    def __init__(self, **options: Any) -> None:
        super().__init__(guard=False, **options)
        self._round: tuple[float, int, int] | None = None  # (opened, peak then, extra)
        self.rounds = [0, 0]  # succeeded, failed

    def _steady(self) -> bool:
        return self.kind == "continuous" and not self.slow_start

    def _round_due(self, opened: float) -> float:
        """When a round opened at ``opened`` is judged: two first tokens' time and a step."""
        ttft = statistics.median(self._ttfts) if self._ttfts else self._unit()
        return opened + 2 * ttft + self._unit()

    def _close_round(self, now: float) -> None:
        if self._round is None:
            return
        opened, peak, _ = self._round
        if now < self._round_due(opened):
            return
        self._round = None
        if self.peak > peak:
            self.rounds[0] += 1
            self._misses = 0
        else:
            self.rounds[1] += 1
            self._misses, self._miss_peak = min(self._misses + 1, 4), self.peak
            self._probe, self._calm = 0, self.peak << self._misses

    def budget(self) -> int:
        b = Auto.budget(self)
        if self._round is not None and self._steady():
            b += self._round[2]
        return b

    def admit(self, queue: Any, in_flight: int, now: float) -> list[Any]:
        self._close_round(now)
        if self._steady() and self._probe > 0 and self._round is None and len(queue):
            self._round = (now, self.peak, self.churn() + 1)
        return super().admit(queue, in_flight, now)

    def on_first_token(self, job: Any, now: float) -> None:
        sent = self._waiting.get(job.jid)
        in_round = self._round is not None and sent is not None and sent >= self._round[0]
        kept = (self._probe, self._calm, self._misses, self._miss_peak, self.peak)
        super().on_first_token(job, now)
        if in_round and self._steady() and self._probe == 0 and self._calm != kept[1]:
            # judged by growth at the round's end, not by this late start
            self._probe, self._calm, self._misses, self._miss_peak, self.peak = kept
        self._close_round(now)

    def next_wakeup(self, now: float) -> float | None:
        wake = super().next_wakeup(now)
        if self._round is not None:
            due = self._round_due(self._round[0])
            wake = due if wake is None or due < wake else wake
        return wake


def make(name: str) -> str | Auto:
    """The policy ``name`` names: a watched ``auto`` or one of its variants (above), else the
    name itself (``naive``, ``fixed:8``, ... for ``server_matrix.run_cell``)."""
    if name == "auto":
        return WatchedAuto()
    if name == "auto-any-pause":
        return AnyPauseAuto()
    if name == "auto-no-handover":  # as in server_matrix.py: no slot's next request ahead
        return WatchedAuto(handover=0)
    if name.startswith("auto:"):  # auto:k=v+k=v: Auto's options, e.g. auto:ramp_doubles=False
        pairs = (kv.split("=", 1) for kv in name[5:].split("+"))
        return WatchedAuto(**{k: ast.literal_eval(v) for k, v in pairs})
    if name.startswith("auto-cap"):
        return CappedAuto(cap=float(name[8:]))
    if name.startswith("auto-ccap"):
        return CappedAuto(cap=float(name[9:]), kinds=("continuous",))
    if name == "auto-fcfs-gap":
        return FcfsGapAuto()
    if name == "auto-seq-wait":
        return WatchedAuto(sequential_wait=True)
    if name in ("auto-churn", "auto-churn-norun"):
        return ChurnAuto(guard=name == "auto-churn")
    if name == "auto-rounds":
        return RoundAuto()
    if name.startswith("auto-floor"):
        return FloorAuto(int(name[10:]))
    return name
