"""Issue 14's targets, checked per cell of ``server_matrix.py`` (medians over seeds).

Each check is a named ratio against its bound, so the matrix prints what every ``auto`` cell
measured and whether it met its target, not only the "never worse" guard:

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

    @property
    def ok(self) -> bool:
        if math.isnan(self.value):
            return False
        return self.value >= self.bound if self.at_least else self.value <= self.bound

    def __str__(self) -> str:
        op = ">=" if self.at_least else "<="
        mark = "ok" if self.ok else "MISS"
        ref = f", naive {self.naive:.3f}" if self.naive is not None else ""
        return f"{self.name} {self.value:.3f} ({op} {self.bound:g}{ref}) {mark}"


def checks(kind: Kind, workload: str, cells: dict[str, Any], step: float) -> list[Check]:
    """The targets of ``auto``'s cell (``cells`` maps policy -> Cell; ``step`` model s)."""
    auto, naive, sorted_ = cells.get("auto"), cells.get("naive"), cells.get("sorted")
    if auto is None or naive is None or sorted_ is None:
        return []
    best = cells.get("best-fixed")

    def ratio(a: float, b: float) -> float:
        if b == 0 and a == 0:  # e.g. no request within 4 steps under any policy: a tie
            return 1.0
        return a / b if b else math.inf

    span = min(naive.med("makespan"), sorted_.med("makespan"))
    out = [
        Check("span/better", ratio(auto.med("makespan"), span), 1.05, False),
        Check(
            "good4/better",
            ratio(auto.med("good4"), max(naive.med("good4"), sorted_.med("good4"))),
            0.95,
            True,
        ),
        Check(
            "e2e/better",
            ratio(auto.med("e2e_p50"), min(naive.med("e2e_p50"), sorted_.med("e2e_p50"))),
            1.05,
            False,
        ),
        Check(
            "short/better",
            ratio(auto.med("short_p50"), min(naive.med("short_p50"), sorted_.med("short_p50"))),
            1.05,
            False,
        ),
    ]
    if kind == "static" and workload in OPEN_LOOP:
        best_of = min(naive.med("short_p50"), sorted_.med("short_p50"))  # 3x better than both
        out.append(Check("short x", ratio(best_of, auto.med("short_p50")), 3.0, True))
    if kind == "static" and workload in BURSTS:
        out.append(Check("short x naive", ratio(naive.med("short_p50"), auto.med("short_p50")),
                         10.0, True))  # fmt: skip
        out.append(Check("span/oracle", ratio(auto.med("makespan"), naive.med("oracle")), 1.10,
                         False))  # fmt: skip
    if kind == "continuous":
        if best is not None:
            out.append(Check("good4/best", ratio(auto.med("good4"), best.med("good4")), 0.95,
                             True))  # fmt: skip
        # naive's beside it: over HTTP a loaded server's first token (the step under way, then a
        # step at its load, the round trip) is about 2 steps even with nothing queued
        floor = ratio(naive.med("ttft50"), step)
        out.append(Check("ttft p50 steps", ratio(auto.med("ttft50"), step), 2.0, False, floor))
        if workload == "poisson150":
            out.append(Check("ttft99/naive", ratio(auto.med("ttft99"), naive.med("ttft99")), 1.0,
                             False))  # fmt: skip
    return out
