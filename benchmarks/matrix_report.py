"""``server_matrix.py``'s figures: a cell's per-seed measures from its traces, the printed
table of a row, the Markdown table of every ``auto`` cell's targets at the end of a run, and
why each cell that misses a target misses it (``table``, ``by_row``).

Why an ``auto`` cell misses: its targets checked again for ``auto-warm``, for each swept fixed
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
import statistics
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

from matrix_targets import Check, Kind, better_of, checks, paired

from fairstream import StreamTrace

__all__ = ["READINGS", "TABLE", "Cell", "Reading", "by_row", "read", "report", "summary", "table"]


class Row(Protocol):
    """What the report needs of a server_matrix row."""

    name: str
    kind: Kind

    @property
    def scale(self) -> float: ...

    @property
    def step(self) -> float: ...


class Job(Protocol):
    """What the report needs of a server_matrix job."""

    max_tokens: int


@dataclass
class Cell:
    makespan: list[float] = field(default_factory=list)
    short_p50: list[float] = field(default_factory=list)
    e2e_p50: list[float] = field(default_factory=list)
    long_p50: list[float] = field(default_factory=list)
    good4: list[float] = field(default_factory=list)
    good05: list[float] = field(default_factory=list)
    ttft50: list[float] = field(default_factory=list)
    ttft99: list[float] = field(default_factory=list)
    oracle: list[float] = field(default_factory=list)
    errors: int = 0

    def add(self, traces: list[StreamTrace], row: Row, jobs: list[Job]) -> None:
        ok = [t for t in traces if t.outcome == "ok"]
        self.errors += len(jobs) - len(ok)
        if not ok:
            return
        starts = [t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in ok]
        span = max(t.end for t in ok) - min(starts)
        cut = statistics.median(j.max_tokens for j in jobs)
        e2e = [t.end - s for t, s in zip(ok, starts, strict=True)]
        short = [e for e, t in zip(e2e, ok, strict=True) if (t.max_tokens or 0) <= cut]
        long = [e for e, t in zip(e2e, ok, strict=True) if (t.max_tokens or 0) > cut]
        ttft = sorted(t.ttft for t in ok if t.ttft is not None)
        step = row.step * row.scale

        def goodput(slo: float) -> float:
            return sum(t.output_tokens for t in ok if t.ttft is not None and t.ttft <= slo) / span

        self.makespan.append(span / row.scale)
        self.short_p50.append(statistics.median(short) / row.scale)
        self.e2e_p50.append(statistics.median(e2e) / row.scale)
        self.long_p50.append(statistics.median(long) / row.scale if long else float("nan"))
        self.good4.append(goodput(4 * step))
        self.good05.append(goodput(0.5 * row.scale))
        self.ttft50.append(ttft[len(ttft) // 2] / row.scale)
        self.ttft99.append(ttft[min(len(ttft) - 1, int(0.99 * len(ttft)))] / row.scale)

    def take_last(self, other: Cell) -> None:
        """Append ``other``'s latest run (one seed of a swept fixed concurrency), and its
        failures (older files hold cells without them)."""
        self.errors += other.errors
        if not other.makespan:  # every request of that run failed
            return
        for f in ("makespan", "short_p50", "e2e_p50", "long_p50", "good4", "good05", "ttft50",
                  "ttft99"):  # fmt: skip
            getattr(self, f).append(getattr(other, f)[-1])

    def med(self, name: str) -> float:
        values = getattr(self, name)
        return statistics.median(values) if values else float("nan")


TABLE: list[tuple[str, list[Check]]] = []  # every auto cell's checks, for the summary
BOTH: dict[str, list[str]] = {}  # per cell, the fixed limits that meet span/better and good4/best


def frontier(name: str, cells: dict[str, Cell]) -> None:
    """The sweep's fixed concurrencies against two targets at once: makespan over the better
    of naive and sorted, and 4-step goodput over the best fixed (can any meet both?)."""
    best, sweep = cells.get("best-fixed"), [p for p in cells if p.startswith("fixed:")]
    spans = [cells[p].makespan for p in ("naive", "sorted") if p in cells]
    better = better_of(*spans) if len(spans) == 2 else (spans[0] if spans else [])
    if best is None or not sweep or not better or not best.med("good4"):
        return
    parts, both = [], []
    for p in sorted(sweep, key=lambda p: int(p.removeprefix("fixed:"))):
        span, good = paired(cells[p].makespan, better), paired(cells[p].good4, best.good4)
        parts.append(f"{p.removeprefix('fixed:')}: {span:.2f}/{good:.2f}")
        if span <= 1.05 and good >= 0.95:
            both.append(p)
    BOTH[name] = both
    print(f"  fixed N, span/better / good4/best: {', '.join(parts)};"
          f" meets both: {', '.join(both) or 'none'}")  # fmt: skip


def noise(cells: dict[str, Cell], burst: bool) -> None:
    """The widest swept limit against the baseline that sends the same way, seed by seed: a
    fixed limit queues shortest-first, so on a burst that is sorted, and under open-loop arrivals
    (one at a time) naive. Where the limit never holds a request (the 32-request demo burst with
    a sweep to 32, 50% load) the two send alike and the spread is the cell's own noise, the
    yardstick for a 5% target; where it holds, the ratios are the limit's effect, not noise."""
    sweep = [p for p in cells if p.startswith("fixed:")]
    ref = "sorted" if burst else "naive"
    base = cells.get(ref)
    if not sweep or base is None:
        return
    wide = max(sweep, key=lambda p: int(p.removeprefix("fixed:")))
    parts = []
    for name, label in (("makespan", "span"), ("e2e_p50", "e2e"), ("good4", "good4")):
        a, b = getattr(cells[wide], name), getattr(base, name)
        if len(a) != len(b) or not a:
            continue
        each = sorted(paired([x], [y]) for x, y in zip(a, b, strict=True))
        parts.append(f"{label} {paired(a, b):.3f} ({each[0]:.2f}-{each[-1]:.2f})")
    print(f"  {wide} / {ref}, median (seeds' range): {', '.join(parts)}")


def report(row: Row, results: dict[str, dict[str, Cell]]) -> list[str]:
    """Print the row's cells; return the auto cells that miss a target."""
    misses = []
    for wl, cells in results.items():
        naive = cells.get("naive")
        best = cells.get("best-fixed")
        if naive is None:
            continue
        orc = naive.med("oracle")
        print(f"\n{row.name} / {wl}" + (f"  (oracle makespan {orc:.2f} s)" if orc == orc else ""))
        print(f"  {'policy':<14} {'span/naive':>10} {'e2e/naive':>9} {'short x':>8} {'long x':>7} "
              f"{'good4/best':>10} {'good.5/best':>11} {'ttft p50':>9} {'ttft p99':>9} "
              f"{'span/orc':>8}")  # fmt: skip
        for policy, c in cells.items():
            if policy.startswith("fixed:"):
                continue  # the sweep: one line below
            g4 = paired(c.good4, best.good4) if best else float("nan")
            g5 = paired(c.good05, best.good05) if best else float("nan")
            print(
                f"  {policy:<14} {paired(c.makespan, naive.makespan):>10.3f}"
                f" {paired(c.e2e_p50, naive.e2e_p50):>9.3f}"
                f" {paired(naive.short_p50, c.short_p50):>8.2f}"
                f" {paired(naive.long_p50, c.long_p50):>7.2f} {g4:>10.3f} {g5:>11.3f}"
                f" {c.med('ttft50') * 1e3:>7.0f}ms {c.med('ttft99') * 1e3:>7.0f}ms"
                f" {paired(c.makespan, naive.oracle):>8.3f}"
                + (f"  ({c.errors} failed)" if c.errors else "")
            )
        frontier(f"{row.name} / {wl}", cells)
        noise(cells, burst=not wl.startswith("poisson"))
        found = checks(row.kind, wl, cells, row.step)
        if not found:
            continue
        failed = [c for c in found if not c.ok]
        verdict = "ok" if not failed else "MISSES " + ", ".join(c.name for c in failed)
        # in the table before its lines show: a Ctrl-C as they come (unbuffered) still counts it
        TABLE.append((f"{row.name} / {wl}", found))
        read(f"{row.name} / {wl}", row.kind, wl, cells, row.step, found)
        misses += [f"{row.name}/{wl}: {c}" for c in failed]
        print(f"  auto vs the better of naive and sorted, and its targets: {verdict}")
        print("    " + "; ".join(str(c) for c in found))
    return misses


def summary() -> None:
    """Every auto cell's targets as one Markdown table (a miss in bold)."""
    names = list(dict.fromkeys(c.name for _, found in TABLE for c in found))

    def shown(ref: str) -> list[str]:  # the checks that carry a reference measure ``ref``
        return [
            n
            for n in names
            if any(c.name == n and getattr(c, ref) is not None for _, f in TABLE for c in f)
        ]

    refs, bests = shown("naive"), shown("best")
    print("\n| cell | " + " | ".join(names) + "".join(f" | {n}: naive" for n in refs)
          + "".join(f" | {n}: best fixed" for n in bests) + " |")  # fmt: skip
    print("|---|" + "---:|" * (len(names) + len(refs) + len(bests)))
    for cell, found in TABLE:
        by = {c.name: c for c in found}
        marks = [
            "" if n not in by else f"{by[n].value:.3f}" if by[n].ok else f"**{by[n].value:.3f}**"
            for n in names
        ]
        marks += [f"{by[n].naive:.3f}" if n in by and by[n].naive is not None else "" for n in refs]
        marks += [f"{by[n].best:.3f}" if n in by and by[n].best is not None else "" for n in bests]
        print(f"| {cell} | " + " | ".join(marks) + " |")
    # each target on its own: in how many of the cells that have it does it hold
    tally = [
        f"{n} {sum(c.ok for _, f in TABLE for c in f if c.name == n)}"
        f"/{sum(c.name == n for _, f in TABLE for c in f)}"
        for n in names
    ]
    print("\ntargets met, cells: " + ", ".join(tally))
    missed = [cell for cell, f in TABLE for c in f if c.name == "good4/best" and not c.ok]
    if missed:
        alone = [cell for cell in missed if cell in BOTH and not BOTH[cell]]
        print(f"\ngood4/best missed in {len(missed)} cells; in {len(alone)} of them no swept fixed"
              " limit meets span/better and good4/best together")  # fmt: skip
    slow = [c for _, f in TABLE for c in f if c.name == "ttft p50 steps" and not c.ok]
    if slow:
        above = sum(c.best is not None and c.best > c.bound for c in slow)
        print(f"ttft p50 steps missed in {len(slow)} cells; in {above} of them the best fixed"
              " concurrency's own TTFT p50 is above 2 steps too")  # fmt: skip
    table()  # why the others miss, and per row; the verdict stays the last line
    by_row(TABLE)
    met = sum(all(c.ok for c in found) for _, found in TABLE)
    print(f"\n{met} of {len(TABLE)} auto cells meet every target")


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
