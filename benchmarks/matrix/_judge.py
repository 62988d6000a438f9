"""What a results file says: each cell's arms as ratios, its targets judged where they are
feasible, and the change between two files against the noise the seeds and repeats show.

A target is judged in a cell only where an arm that really ran (naive, sorted, a fixed limit
or ``auto``; never the oracle) meets it. Elsewhere the cell says "infeasible" and names the
best arm, so no work goes into a figure no arm reaches. The targets:

- ``span``: ``auto``'s makespan at most the better of naive's and sorted's, beyond noise;
- ``e2e``: the same for E2E p50 (from submission);
- ``short``: on static servers, short requests' p50 at least 10x sooner than naive's;
- ``ttft``: under overload, TTFT p50 within 2 decode steps;
- ``good4``: on continuous servers, 4-step goodput at least 0.95x the best fixed limit's with
  the makespan within 1.05x the better of naive and sorted.

The noise of a cell is what repeating naive in the same run moves its figures by (the largest
over seeds, at least 3%); a ratio of two noisy figures gets twice that.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

REAL = ("naive", "sorted", "fixed", "auto")  # the arms that run; not naive-again, not the oracle
FLOOR = 0.03


def _med(values: list[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return statistics.median(vals) if vals else math.nan


@dataclass(frozen=True)
class Verdict:
    """One target in one cell."""

    target: str
    state: str  # met | missed | infeasible
    auto: float  # auto's figure for the target
    best_arm: str  # the arm that comes closest (for infeasible: the best that ran)
    best: float

    def __str__(self) -> str:
        if self.state == "infeasible":
            return f"{self.target} infeasible (best {self.best_arm} {self.best:.2f})"
        return f"{self.target} {self.auto:.2f} {'ok' if self.state == 'met' else 'MISSED'}"


class CellView:
    """A cell of a results file: every arm's figures, medians over seeds."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.name: str = raw["cell"]
        self.kind: str = raw["kind"]
        self.workload: str = raw["workload"]
        self.step: float = raw["step"]
        self.seeds: list[dict[str, dict[str, float]]] = raw["seeds"]
        self.arms = [a for a in self.seeds[0] if a != "naive-again"]

    def fig(self, arm: str, key: str) -> float:
        return _med([s[arm][key] for s in self.seeds])

    def better(self, key: str) -> float:
        """The better of naive and sorted on ``key`` (lower is better), per seed, median."""
        return _med([min(s["naive"][key], s["sorted"][key]) for s in self.seeds])

    def ratio(self, arm: str, key: str) -> float:
        """``arm``'s figure over the better of naive and sorted's, median of per-seed ratios."""
        return _med([s[arm][key] / min(s["naive"][key], s["sorted"][key]) for s in self.seeds])

    def speedup(self, arm: str) -> float:
        """naive's short-request p50 over ``arm``'s (how many times sooner)."""
        return _med([s["naive"]["short_p50"] / s[arm]["short_p50"] for s in self.seeds])

    def noise(self, key: str) -> float:
        """How far a repeat of naive moved ``key`` in this cell: the largest over seeds."""
        moves = [
            abs(s["naive-again"][key] - s["naive"][key])
            / min(s["naive-again"][key], s["naive"][key])
            for s in self.seeds
            if s["naive"][key] > 0 and s["naive-again"][key] > 0
        ]
        return max([FLOOR, *moves])

    def good4_ok(self, arm: str) -> bool:
        best_fixed = max(self.fig(a, "good4") for a in self.arms if a.startswith("fixed"))
        return self.fig(arm, "good4") >= 0.95 * best_fixed and self.ratio(arm, "makespan") <= 1.05

    def verdicts(self) -> list[Verdict]:
        """Each target that applies to this cell, judged only where some real arm meets it."""
        real = [a for a in self.arms if a.startswith(REAL)]
        span_band, e2e_band = 1 + 2 * self.noise("makespan"), 1 + 2 * self.noise("e2e_p50")
        checks: list[tuple[str, Callable[[str], float], Callable[[float], bool], bool]] = [
            ("span", lambda a: self.ratio(a, "makespan"), lambda v: v <= span_band, False),
            ("e2e", lambda a: self.ratio(a, "e2e_p50"), lambda v: v <= e2e_band, False),
        ]
        if self.kind == "static":
            checks.append(("short", self.speedup, lambda v: v >= 10, True))
        if self.workload == "overload":
            steps = lambda a: self.fig(a, "ttft_p50") / self.step  # noqa: E731
            checks.append(("ttft", steps, lambda v: v <= 2, False))
        if self.kind == "continuous":
            top = max(self.fig(a, "good4") for a in self.arms if a.startswith("fixed"))
            share = lambda a: self.fig(a, "good4") / top if top else math.nan  # noqa: E731
            checks.append(("good4", share, lambda v: v >= 0.95, True))
        out = []
        for name, value, ok, higher in checks:
            vals = {a: value(a) for a in real}
            if name == "good4":  # goodput counts only with the makespan kept
                passes = {a: ok(vals[a]) and self.ratio(a, "makespan") <= 1.05 for a in real}
            else:
                passes = {a: ok(vals[a]) for a in real}
            ranked = sorted(
                (a for a in real if not math.isnan(vals[a])),
                key=lambda a: (passes[a], vals[a] if higher else -vals[a]),
            )
            best_arm = ranked[-1] if ranked else "auto"
            state = (
                "infeasible" if not any(passes.values()) else "met" if passes["auto"] else "missed"
            )
            out.append(Verdict(name, state, vals["auto"], best_arm, vals[best_arm]))
        return out
