"""The dispatcher's targets, checked per cell of ``server_matrix.py`` (medians over seeds).

Each check is a named ratio against its bound, so the matrix prints what every ``auto`` cell
measured and whether it met its target, not only the "never worse" guard. A ratio is the
median over seeds of that seed's ratio (auto's run against the same seed's naive, sorted and
best fixed): the seeds are different workloads (naive's E2E p50 can differ 2x between them), so
a ratio of medians could set one seed's auto against another seed's naive.

- every cell: makespan <= 1.05x, 4-step goodput >= 0.95x, E2E p50 (all requests) <= 1.05x and
  short-request E2E p50 <= 1.05x the better of naive and sorted;
- static rows, open-loop arrivals at 100% and 150%: short p50 >= 3x naive's and sorted's;
- static rows, the two bursts (demo, burst160): short p50 >= 10x naive's, makespan <= 1.10x the
  oracle's;
- continuous rows: 4-step goodput >= 0.95x the best fixed concurrency's, TTFT p50 <= 2 steps
  (a lone request's step; naive's own is printed beside it, as the floor HTTP and a loaded
  step set), and at 150% TTFT p99 below naive's.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["static", "continuous", "sequential"]
BURSTS = ("demo", "burst160")
OPEN_LOOP = ("poisson100", "poisson150")


@dataclass(frozen=True)
class Check:
    """One target of one cell: ``value`` (a ratio, or steps) against ``bound``."""

    name: str
    value: float
    bound: float
    at_least: bool  # True: value >= bound passes
    naive: float | None = None  # the same measure under naive, shown beside it (not judged)
    best: float | None = None  # and under the best fixed concurrency (not judged either)

    @property
    def ok(self) -> bool:
        if math.isnan(self.value):
            return False
        return self.value >= self.bound if self.at_least else self.value <= self.bound

    def __str__(self) -> str:
        op = ">=" if self.at_least else "<="
        mark = "ok" if self.ok else "MISS"
        ref = f", naive {self.naive:.3f}" if self.naive is not None else ""
        ref += f", best fixed {self.best:.3f}" if self.best is not None else ""
        return f"{self.name} {self.value:.3f} ({op} {self.bound:g}{ref}) {mark}"


def _ratio(a: float, b: float) -> float:
    if b == 0 and a == 0:  # e.g. no request within 4 steps under any policy: a tie
        return 1.0
    return a / b if b else math.inf


def paired(num: list[float], den: list[float]) -> float:
    """The median over seeds of ``num[i] / den[i]``; if a seed is missing from either (a run
    with no request ok), the ratio of the medians instead."""
    if not num or not den:
        return math.nan
    if len(num) != len(den):
        return _ratio(statistics.median(num), statistics.median(den))
    return statistics.median(_ratio(a, b) for a, b in zip(num, den, strict=True))


def better_of(a: list[float], b: list[float], pick: Any = min) -> list[float]:
    """Per seed, the better of two policies' values (if a seed is missing from either: the
    better of their medians, one value, so :func:`paired` takes medians)."""
    if len(a) == len(b):
        return [pick(x, y) for x, y in zip(a, b, strict=True)]
    return [pick(statistics.median(a), statistics.median(b))] if a and b else []


def checks(kind: Kind, workload: str, cells: dict[str, Any], step: float) -> list[Check]:
    """The targets of ``auto``'s cell (``cells`` maps policy -> Cell, whose fields list one
    value per seed; ``step`` model s)."""
    auto, naive, sorted_ = cells.get("auto"), cells.get("naive"), cells.get("sorted")
    if auto is None or naive is None or sorted_ is None:
        return []
    best = cells.get("best-fixed")

    def runs(cell: Any, name: str) -> list[float]:
        return list(getattr(cell, name))

    def better(name: str, pick: Any = min) -> list[float]:
        return better_of(runs(naive, name), runs(sorted_, name), pick)

    def vs_better(name: str, pick: Any = min) -> float:
        return paired(runs(auto, name), better(name, pick))

    out = [
        Check("span/better", vs_better("makespan"), 1.05, False),
        Check("good4/better", vs_better("good4", max), 0.95, True),
        Check("e2e/better", vs_better("e2e_p50"), 1.05, False),
        Check("short/better", vs_better("short_p50"), 1.05, False),
    ]
    if kind == "static" and workload in OPEN_LOOP:  # 3x better than both
        short_x = paired(better("short_p50"), runs(auto, "short_p50"))
        out.append(Check("short x", short_x, 3.0, True))
    if kind == "static" and workload in BURSTS:
        out.append(Check("short x naive", paired(runs(naive, "short_p50"), runs(auto, "short_p50")),
                         10.0, True))  # fmt: skip
        out.append(Check("span/oracle", paired(runs(auto, "makespan"), runs(naive, "oracle")),
                         1.10, False))  # fmt: skip
    if kind == "continuous":
        if best is not None:
            out.append(Check("good4/best", paired(runs(auto, "good4"), runs(best, "good4")), 0.95,
                             True))  # fmt: skip
        # naive's beside it: over HTTP a loaded server's first token (the step under way, then a
        # step at its load, the round trip) is about 2 steps even with nothing queued
        floor = _ratio(statistics.median(runs(naive, "ttft50")), step)
        auto_steps = _ratio(statistics.median(runs(auto, "ttft50")), step)
        # and the best fixed concurrency's: what holding requests for a free slot gets at best
        fixed = _ratio(statistics.median(runs(best, "ttft50")), step) if best else None
        out.append(Check("ttft p50 steps", auto_steps, 2.0, False, floor, fixed))
        if workload == "poisson150":
            out.append(Check("ttft99/naive", paired(runs(auto, "ttft99"), runs(naive, "ttft99")),
                             1.0, False))  # fmt: skip
    return out
