"""``auto``'s decision record: scripted virtual-time scenarios, one line per event.

Each line holds the event, the request, and what ``auto`` then is: its state, its limit, its
slow-start offer and peak, the first wave, the batches sent just in time, and the reason of
any change the event caused. The record pins behaviour: a refactor keeps it identical; a
change of behaviour updates the golden file in a commit that says why.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fairstream import Auto, ServerConfig, StreamTrace
from fairstream._dispatch._job import Job
from fairstream._dispatch._policy import Policy
from fairstream._dispatch._queue import FairQueue
from fairstream.sim import SimRequest, simulate

__all__ = ["SCENARIOS", "record", "record_all"]


class Recording(Policy):
    """Forwards every hook to an ``Auto`` and writes a line after each event."""

    name = "recording"

    def __init__(self, auto: Auto, lines: list[str]) -> None:
        super().__init__()
        self.auto, self.lines = auto, lines
        self.order = auto.order
        self._changes = len(auto.changes)

    def limit(self) -> int:
        return self.auto.limit()

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        return self.auto.admit(queue, in_flight, now)

    def next_wakeup(self, now: float) -> float | None:
        return self.auto.next_wakeup(now)

    def on_send(self, job: Job, now: float) -> None:
        self.auto.on_send(job, now)
        self._line("send", job, now)

    def on_first_token(self, job: Job, now: float) -> None:
        self.auto.on_first_token(job, now)
        self._line("first", job, now)

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self.auto.on_done(job, now, traces)
        self._line("done", job, now)

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self.auto.on_overload(now, retry_after)
        self._line("overload", None, now)

    def _line(self, event: str, job: Job | None, now: float) -> None:
        a, s = self.auto, self.auto.situation
        rid = (getattr(job.payload, "rid", None) or job.label or "?") if job is not None else "-"
        why = "; ".join(a.changes[self._changes :])
        self._changes = len(a.changes)
        self.lines.append(
            f"{now:9.4f} {event:<8} {rid:<5} {state_name(a):<22} limit={a.limit():<3} "
            f"offer={s.offer:<3} peak={s.peak:<3} probe={s.probe} wave={a.first_wave} "
            f"batches={a.batches}" + (f" | {why}" if why else "")
        )


def state_name(auto: Auto) -> str:
    """The state ``auto`` is in, with slow start's ramp shown as ``+ramp``."""
    name, s = auto.state.name, auto.situation
    if name == "static":
        name = f"static(B={s.batch_size}{'' if s.batch_exact else '+'})"
    return name + ("+ramp" if s.slow_start and auto.state.name != "probing" else "")


class Restarted:
    """A server restarted mid-run with another scheduler: requests sent before ``at`` finish
    on the old engine, later ones go to the new one."""

    def __init__(self, before: Any, after: Any, at: float) -> None:
        self.before, self.after, self.at = before, after, at
        self.stats = after.stats

    def add(self, req: Any, now: float) -> None:
        (self.before if now < self.at else self.after).add(req, now)

    def abort(self, rid: str, now: float) -> None:
        self.before.abort(rid, now)
        self.after.abort(rid, now)

    def next_wakeup(self) -> float | None:
        times = [t for t in (self.before.next_wakeup(), self.after.next_wakeup()) if t is not None]
        return min(times) if times else None

    def advance(self, now: float) -> list[Any]:
        return [*self.before.advance(now), *self.after.advance(now)]


def burst(n: int, lengths: list[int], seed: int, prompt: int = 32) -> list[SimRequest]:
    rng = random.Random(seed)
    out = [rng.choice(lengths) for _ in range(n)]
    return [SimRequest(0.0, prompt, m, expected_tokens=m) for m in out]


def poisson(n: int, rate: float, lengths: list[int], seed: int) -> list[SimRequest]:
    rng, t, out = random.Random(seed), 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate)
        m = rng.choice(lengths)
        out.append(SimRequest(t, 32, m, expected_tokens=m))
    return out


def bands(sizes: list[tuple[int, int]]) -> list[SimRequest]:
    """A burst sent in bands of equal lengths: ``(count, length)`` pairs, in that order."""
    return [SimRequest(0.0, 32, m, expected_tokens=m) for count, m in sizes for _ in range(count)]


STATIC8 = ServerConfig(mode="static", batch_size=8, release="batch_end")
STATIC16 = ServerConfig(mode="static", batch_size=16, release="batch_end")
STATIC4 = ServerConfig(mode="static", batch_size=4, release="batch_end")
STATIC4_STREAM = ServerConfig(mode="static", batch_size=4, release="stream")
CONT16 = ServerConfig(mode="continuous", max_num_seqs=16)
CONT8 = ServerConfig(mode="continuous", max_num_seqs=8)
KV = ServerConfig(mode="continuous", max_num_seqs=32, kv_tokens=4096)
PREFILL = ServerConfig(mode="continuous", max_num_seqs=16, prefill_priority=True)
SEQ = ServerConfig(mode="sequential")
MIX = [8, 32, 128, 256]


@dataclass(frozen=True)
class Scenario:
    name: str
    engine: Callable[[], Any]
    workload: Callable[[], list[SimRequest]]
    policy: Callable[[], Auto] = Auto


SCENARIOS = [
    Scenario("static-B8 burst", STATIC8.build_engine, lambda: burst(32, MIX, 1)),
    Scenario("static-B8 poisson", STATIC8.build_engine, lambda: poisson(40, 3.0, [8, 8, 8, 64], 2)),
    Scenario(
        "static-B16 one band of long answers", STATIC16.build_engine, lambda: bands([(40, 96)])
    ),
    Scenario(
        "static-B4 a short band below the offer",
        STATIC4.build_engine,
        lambda: burst(12, [8, 64], 11),
    ),
    Scenario("static-B4 stream burst", STATIC4_STREAM.build_engine, lambda: burst(24, MIX, 3)),
    Scenario("continuous-16 burst", CONT16.build_engine, lambda: burst(48, MIX, 4)),
    Scenario("continuous-16 poisson", CONT16.build_engine, lambda: poisson(48, 20.0, MIX, 5)),
    Scenario(
        "continuous-8 bands",
        CONT8.build_engine,
        lambda: bands([(8, 16), (8, 64), (8, 256)]),
    ),
    Scenario("kv-limited burst", KV.build_engine, lambda: burst(48, [64, 256, 512], 6, 256)),
    Scenario("prefill-priority burst", PREFILL.build_engine, lambda: burst(32, MIX, 7, 512)),
    Scenario("sequential burst", SEQ.build_engine, lambda: burst(12, MIX, 8)),
    Scenario(
        "restart static -> continuous",
        lambda: Restarted(STATIC8.build_engine(), CONT16.build_engine(), at=6.0),
        lambda: poisson(120, 8.0, [8, 32, 64], 9),
    ),
    Scenario(
        "continuous-16 burst, ttft_slo",
        CONT16.build_engine,
        lambda: burst(32, MIX, 10),
        lambda: Auto(ttft_slo=0.5),
    ),
]


def record(s: Scenario) -> list[str]:
    lines = [f"# {s.name}"]
    simulate(s.engine(), s.workload(), Recording(s.policy(), lines))
    return lines


def record_all() -> Iterator[str]:
    for s in SCENARIOS:
        yield from record(s)
