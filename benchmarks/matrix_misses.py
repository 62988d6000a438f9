"""Why an ``auto`` cell misses: its targets checked again for ``auto-warm``, for each swept fixed
limit and seed by seed, so the closing reading of a matrix is printed by the script, not
written by hand.

Each missed target is first checked alone: which swept fixed limits meet it, and does
``auto-warm`` (auto started from the same seed's all-at-once traffic). A target no limit meets
(a TTFT p50 within 2 steps where even the best limit queues longer) is past what admission
gets there. The cell is then read on the targets some limit meets:

- **past every limit**: every target it misses is one no swept limit meets either;
- **cold start**: ``auto-warm`` meets all the others: the miss is what a fresh dispatcher pays
  to learn the server;
- **auto short of fixed N**: one swept limit meets all of them (and every target auto meets):
  one admission limit was enough and ``auto`` did not find it;
- **TTFT trades off**: no limit meets them all, because the limits that bring TTFT p50 within
  2 steps (1 or 4 in flight) give up makespan or goodput; on the other targets the cell is then
  read as above (met by auto itself, cold start, or auto short of fixed N);
- **limits trade them off**: otherwise (each is met by some limit, no one limit meets them all).

Beside each missed target: how many seeds met it on their own (a 1-of-3 split is a median
over noisy seeds, not a steady shortfall).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from matrix_targets import Check, Kind, checks

__all__ = ["READINGS", "Reading", "read", "table"]


@dataclass(frozen=True)
class Reading:
    """One cell that misses a target, and what the same targets read for other policies."""

    cell: str
    missed: list[Check]
    met_by_seed: dict[str, int]  # missed target -> how many seeds met it alone
    seeds: int
    reach: dict[str, list[str]]  # missed target -> the fixed limits (and "warm") meeting it
    warm: bool  # auto-warm meets every missed target some limit meets
    limits: list[str]  # the fixed limits meeting every target but those no limit meets

    @property
    def why(self) -> str:
        if not any(self.reach.values()):
            return "past every limit"
        if self.warm:
            return "cold start"
        if self.limits:
            return "auto short of fixed " + ",".join(self.limits)
        if self.rest is None:
            return "limits trade them off"
        return "TTFT trades off" + (f"; {self.rest}" if self.rest else "")

    rest: str | None = None  # no limit meets all: the reading without TTFT p50 ("": auto meets)

    @property
    def kind(self) -> str:
        """:attr:`why` without the limits' numbers, to count readings alike."""
        return re.sub(r"fixed [\d,]+", "a fixed limit", self.why)


READINGS: list[Reading] = []
TTFT = "ttft p50 steps"
_LIMIT = "auto short of a fixed limit"
_ORDER = [
    "past every limit",
    "cold start",
    _LIMIT,
    "TTFT trades off",
    "TTFT trades off; cold start",
    f"TTFT trades off; {_LIMIT}",
    "limits trade them off",
]


def _as(cells: dict[str, Any], policy: str) -> dict[str, Any]:
    """The cells with ``policy``'s run in auto's place."""
    return {**cells, "auto": cells[policy]}


def _seed(cell: Any, i: int) -> Any:
    """One seed of a cell (every per-seed list cut to its ``i``-th value)."""
    cut = {
        f.name: [v[i]]
        for f in fields(cell)
        if isinstance(v := getattr(cell, f.name), list) and len(v) > i
    }
    return replace(cell, **cut)


def read(
    name: str, kind: Kind, workload: str, cells: dict[str, Any], step: float, found: list[Check]
) -> Reading | None:
    """Read auto's cell ``name`` (policy -> Cell) whose targets are ``found``; None if it meets
    them all. The reading is kept in :data:`READINGS` for :func:`table`."""
    missed = [c for c in found if not c.ok]
    if not missed:
        return None
    seeds = len(cells["auto"].makespan)
    met: dict[str, int] = {c.name: 0 for c in missed}
    for i in range(seeds):
        one = {p: _seed(c, i) for p, c in cells.items()}
        for c in checks(kind, workload, one, step):
            if c.name in met and c.ok:
                met[c.name] += 1
    sweep = sorted((p for p in cells if p.startswith("fixed:")), key=lambda p: int(p[6:]))
    others = [*sweep, *(["auto-warm"] if "auto-warm" in cells else [])]
    ok = {p: {c.name for c in checks(kind, workload, _as(cells, p), step) if c.ok} for p in others}
    reach = {c.name: [p.removeprefix("fixed:") for p in others if c.name in ok[p]] for c in missed}
    reach = {n: [p.replace("auto-warm", "warm") for p in ps] for n, ps in reach.items()}
    past = {n for n, ps in reach.items() if not any(p != "warm" for p in ps)}
    wanted = {c.name for c in found} - past  # what some limit meets (or auto itself does)
    lost = wanted & set(met)  # of them, what auto misses
    warm = lost <= ok.get("auto-warm", set())  # warm meets what cold missed
    limits = [p.removeprefix("fixed:") for p in sweep if ok[p] >= wanted]
    rest = None
    if not warm and not limits and TTFT in wanted:  # does TTFT p50 alone stand in the way?
        fixed = [p.removeprefix("fixed:") for p in sweep if ok[p] >= wanted - {TTFT}]
        if not lost - {TTFT}:
            rest = ""
        elif lost - {TTFT} <= ok.get("auto-warm", set()):
            rest = "cold start"
        elif fixed:
            rest = "auto short of fixed " + ",".join(fixed)
    reading = Reading(name, missed, met, seeds, reach, bool(warm), limits, rest)
    READINGS.append(reading)
    return reading


def table() -> None:
    """Every missing cell as a Markdown table, with the count of each reading."""
    if not READINGS:
        return
    print("\n| cell | why | missed: figure (seeds meeting it alone; fixed limits meeting it) |")
    print("|---|---|---|")
    for r in READINGS:
        missed = "; ".join(
            f"{c.name} {c.value:.3f} ({r.met_by_seed[c.name]}/{r.seeds};"
            f" {','.join(r.reach[c.name]) or 'none'})"
            for c in r.missed
        )
        print(f"| {r.cell} | {r.why} | {missed} |")
    kinds = [r.kind for r in READINGS]
    tally = {w: kinds.count(w) for w in sorted(set(kinds), key=_ORDER.index)}
    split = sum(all(n > 0 for n in r.met_by_seed.values()) for r in READINGS)
    print(
        f"\n{len(READINGS)} cells miss: "
        + ", ".join(f"{w} {n}" for w, n in tally.items())
        + f"; in {split} of them each missed target is met by some seed alone (seeds split)"
    )


NEVER_WORSE = ("span/better", "good4/better", "e2e/better", "short/better")


def by_row(table: list[tuple[str, list[Check]]]) -> None:
    """Per row: its cells, how many meet every target, how many "never worse" (the four
    checks against the better of naive and sorted), and its missing cells' readings."""
    rows: dict[str, list[tuple[str, list[Check]]]] = {}
    for cell, found in table:
        rows.setdefault(cell.split(" / ")[0], []).append((cell, found))
    why = {r.cell: r.kind for r in READINGS}
    print("\n| row | cells | meet every target | never worse | missing cells, read |")
    print("|---|---:|---:|---:|---|")
    for row, cells in rows.items():
        every = sum(all(c.ok for c in found) for _, found in cells)
        never = sum(all(c.ok for c in found if c.name in NEVER_WORSE) for _, found in cells)
        kinds = [why[cell] for cell, _ in cells if cell in why]
        read = ", ".join(f"{w} {kinds.count(w)}" for w in sorted(set(kinds), key=_ORDER.index))
        print(f"| {row} | {len(cells)} | {every} | {never} | {read or '-'} |")
