"""One cell of the server matrix, its policies side by side, with what the client went through.

``server_matrix.py`` says *that* a cell misses; this says *why*, run by run: per policy and
seed, E2E p50 and makespan (model seconds), 4-step goodput, TTFT p50, the client's CPU over
its wall time, the event loop's lag (a 2 ms timer's lateness: how late our own client reads
what arrived), where E2E went (medians of the wait in our queue, the first token from the
send, the decode) and the most streams running at once, and for ``auto`` where it settled
(kind, peak, limit, misses) and its starts: how many came later than its own "full server"
threshold, and how many of those the loop's lag alone explains. Policies alternate within a
seed, each against the same server process.

``--slices`` prints each run's requests by when they were sent (model seconds from the first
submit): how many, the others in flight at their sends, TTFT p50 and the share of their tokens
on time at the 4-step SLO: where in a burst a policy keeps requests waiting at the server.

Besides the matrix's policies, ``auto-any-pause`` is ``auto`` with its long-first rule as it
was until session 34 (at any 4-step pause in arrivals, not only at a burst's tail);
``auto-seq-wait`` is ``auto`` keeping one request waiting at a sequential server, as until
session 39; ``auto-fcfs-gap`` counts, at a continuous server's start, only requests sent a
quickest first token before it that still wait as holding a slot; ``auto-cap<f>`` keeps slow
start's sends above the proven slots to ``f`` x the peak (``auto-ccap<f>``: once the server is
known continuous); ``auto:k=v+k=v`` is ``Auto(k=v, ...)`` (e.g. ``auto:ramp_doubles=False``);
readings in benchmarks/README, session 40.

``--sends N`` prints every N-th of ``auto``'s sends with what it saw then: slow start or the
kind, its peak, slow start's offer, the probe, slots due within a step (handovers), how many
run and how many wait for a first token.

Run:  python benchmarks/matrix_cell.py --row cont-64 --workload poisson100 [--seeds 3]
      [--policies naive,auto] [--reps 1] [--quick] [--sends 4] [--slices]
(``--row llama-np4`` and the other llama rows: llama.cpp's server, ``llama_server.py build``.)
Exits 0.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import server_matrix as sm

from fairstream import Auto, StreamTrace
from fairstream._dispatch._tail import critical_first, most_running


class BatchLog:
    """The reference server's static batches as it formed them (``batch_log/sitecustomize.py``
    in the server's process), read run by run."""

    def __init__(self, path: str) -> None:
        self.path, self.offset = path, 0

    @classmethod
    def start(cls) -> BatchLog:
        """Point the servers started after this at a fresh log file."""
        fd, path = tempfile.mkstemp(prefix="fairstream-batches-", suffix=".jsonl")
        os.close(fd)
        hook = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_log")
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (hook, os.environ.get("PYTHONPATH")) if p
        )
        os.environ["FAIRSTREAM_BATCH_LOG"] = path
        return cls(path)

    def since_last(self, row: sm.Row) -> str:
        """The batches formed since the last call: their sizes, and those short of B."""
        with open(self.path) as f:
            f.seek(self.offset)
            lines = f.read().splitlines()
            self.offset = f.tell()
        batches = [json.loads(x) for x in lines]
        sizes = [len(x[1]) for x in batches]
        idle = [x[3] for x in batches if len(x) > 3 and x[3] is not None]
        b = row.config.batch_size
        short = sum(1 for n in sizes[2:-1] if n < b)  # past the cold start, before the tail
        return (
            f"\n           server: {len(sizes)} batches, {short} short of B={b} past the first"
            f" two and before the last ({sum(1 for n in sizes if n == 1)} of one): {sizes}"
            f"\n           server idle between batches: {sum(idle):.2f} s of engine time"
            f" (1 s of it {row.config.time_scale:g} s of ours), {len(idle)} gaps, the longest"
            f" {max(idle, default=0.0) * 1000:.0f} ms"
        )


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
    """Experiment (session 40): on a continuous server a start counts a request sent before it
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
    """``auto`` as it was until session 34, side by side with today's: the long-first rule of
    a burst's tail fires at any pause of 4 steps in arrivals (an open loop's too)."""

    def _admit_critical_first(self, queue: Any, in_flight: int, now: float) -> list[Any]:
        room = self.limit() - in_flight
        return critical_first(queue, room, now, self.peak, 4 * self._unit(), math.inf)


@dataclass
class LoopLag:
    """A 2 ms timer's lateness, sampled for as long as it runs: (when, lag seconds)."""

    samples: list[tuple[float, float]] = field(default_factory=list)

    async def run(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.002)
            self.samples.append((t, time.perf_counter() - t - 0.002))

    def within(self, a: float, b: float) -> float:
        return max((lag for t, lag in self.samples if a <= t <= b), default=0.0)


EDGES = (0.0, 0.2, 0.5, 1.0, 2.0, 4.0, 6.0, 10.0, float("inf"))  # model s from the first submit


def slices(traces: list[StreamTrace], row: sm.Row) -> str:
    """By when requests were sent (model s from the first submit): how many, the median of
    the others in flight at each send, TTFT p50 (ms, wall), and the share of their tokens
    whose request met the 4-step TTFT SLO."""
    ok = [t for t in traces if t.sent is not None and t.ttft is not None and t.end is not None]
    if not ok:
        return ""
    t0 = min(t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in ok)
    slo = 4 * row.step * row.scale
    lines = []
    for a, b in itertools.pairwise(EDGES):
        cut = [t for t in ok if a <= ((t.sent or 0.0) - t0) / row.scale < b]
        if not cut:
            continue
        ahead = statistics.median(
            sum(1 for u in ok if (u.sent or 0.0) < (t.sent or 0.0) < (u.end or 0.0)) for t in cut
        )
        tokens = sum(t.output_tokens for t in cut) or 1
        on_time = sum(t.output_tokens for t in cut if (t.ttft or 0.0) <= slo) / tokens
        ttft = 1e3 * statistics.median(t.ttft or 0.0 for t in cut)
        lines.append(f"{a:g}-{b:g} s: {len(cut):3d} sent, {ahead:4.1f} in flight,"
                     f" ttft {ttft:4.0f} ms, on time {on_time:4.2f}")  # fmt: skip
    return "\n           sent at " + "\n                   ".join(lines)


def parts(traces: list[StreamTrace]) -> tuple[float, float, float]:
    """Where E2E went, medians in ms: in our queue (send less submit), to the first token
    (from the send), and the decode (first token to end)."""

    def p50(xs: list[float]) -> float:
        return 1e3 * statistics.median(xs) if xs else float("nan")

    queue, ttft, decode = [], [], []
    for t in traces:
        if t.sent is not None and t.first_content is not None and t.end is not None:
            queue.append(t.sent - (t.enqueued if t.enqueued is not None else t.sent))
            ttft.append(t.first_content - t.sent)
            decode.append(t.end - t.first_content)
    return p50(queue), p50(ttft), p50(decode)


async def one_run(
    url: str,
    model: str,
    row: sm.Row,
    jobs: list[sm.Job],
    name: str,
    seed: int,
    sends: int = 0,
    by_send: bool = False,
    batches: BatchLog | None = None,
    changes: bool = False,
) -> tuple[str, tuple[float, ...]]:
    """One policy on one seed: its printed line(s), and its E2E p50, makespan, 4-step goodput,
    and E2E's parts (:func:`parts`)."""
    policy: str | Auto = name
    if name == "auto":
        policy = WatchedAuto()
    elif name == "auto-any-pause":  # the burst-tail rule as before session 34
        policy = AnyPauseAuto()
    elif name == "auto-no-handover":  # as in server_matrix.py: no slot's next request ahead
        policy = WatchedAuto(handover=0)
    elif name.startswith("auto:"):  # auto:k=v+k=v: Auto's options, e.g. auto:ramp_doubles=False
        pairs = (kv.split("=", 1) for kv in name[5:].split("+"))
        policy = WatchedAuto(**{k: ast.literal_eval(v) for k, v in pairs})
    elif name.startswith("auto-cap"):  # auto-cap0.5: CappedAuto(cap=0.5)
        policy = CappedAuto(cap=float(name[8:]))
    elif name.startswith("auto-ccap"):  # auto-ccap0.5: the cap once known continuous
        policy = CappedAuto(cap=float(name[9:]), kinds=("continuous",))
    elif name == "auto-fcfs-gap":  # only earlier admissions' waiting sends hold slots
        policy = FcfsGapAuto()
    elif name == "auto-seq-wait":  # sequential: one kept waiting at the server (until session 39)
        policy = WatchedAuto(sequential_wait=True)
    lag = LoopLag()
    monitor = asyncio.create_task(lag.run())
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        traces = await sm.run_cell(url, model, row, jobs, policy, seed)
    finally:
        monitor.cancel()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    cell = sm.Cell()
    cell.add(traces, row, jobs)
    lags = sorted(x for _, x in lag.samples) or [0.0]
    out = (
        f"{name:<8} s{seed}  e2e50 {cell.e2e_p50[-1]:6.3f}  span {cell.makespan[-1]:6.2f}"
        f"  good4 {cell.good4[-1]:6.0f}  ttft50 {cell.ttft50[-1]:6.3f}  cpu/wall {cpu / wall:4.2f}"
        f"  lag p90/max ms {1e3 * lags[int(0.9 * (len(lags) - 1))]:5.1f}/{1e3 * lags[-1]:5.1f}"
    )
    split = parts(traces)
    out += (
        f"\n           E2E's parts, p50 ms: our queue {split[0]:6.1f}, first token {split[1]:6.1f},"
        f" decode {split[2]:7.1f}; most running at once {most_running(traces)}"
    )
    if by_send:
        out += slices(traces, row)
    if batches is not None:
        out += batches.since_last(row)
    if isinstance(policy, WatchedAuto):
        late = [(a, b, th) for a, b, th in policy.starts if b - a > th]
        explained = sum(1 for a, b, th in late if b - a - lag.within(a, b) <= th)
        out += (
            f"\n           auto settled: {policy.describe()}, peak {policy.peak},"
            f" misses {policy._misses}; starts late by its own threshold {len(late)} of"
            f" {len(policy.starts)}, {explained} of them within it once the loop's lag is taken off"
        )
        if changes:  # each change of kind or B, and why
            out += "".join(f"\n             change: {c}" for c in policy.changes)
        if sends:  # every n-th send: what auto saw then (waiting: sent, no first token yet)
            out += "\n" + "\n".join(policy.sends[::sends])
    return out, (cell.e2e_p50[-1], cell.makespan[-1], cell.good4[-1], *split)


async def main(args: argparse.Namespace, url: str, model: str, row: sm.Row) -> None:
    runs: dict[str, list[tuple[float, ...]]] = {p: [] for p in args.policies}
    for _rep in range(args.reps):
        for seed in range(args.seeds):
            jobs = sm.workload(args.workload, seed, row, args.quick)
            for name in args.policies:
                text, figures = await one_run(
                    url,
                    model,
                    row,
                    jobs,
                    name,
                    seed,
                    args.sends,
                    args.slices,
                    args.batch_log,
                    args.changes,
                )
                print(text, flush=True)
                runs[name].append(figures)
    first = args.policies[0]
    print(f"\nmedians over {args.reps * args.seeds} runs, and the median of each run's ratio"
          f" to {first}'s in the same seed and round:")  # fmt: skip
    x = f"{'x':>6}"
    print(
        f"  {'policy':<8} {'E2E p50 s':>9} {x} {'makespan s':>10} {x} {'good4':>7} {x}"
        f"  {'queue ms':>8} {'ttft ms':>7} {'decode ms':>9}"
    )
    for name, figs in runs.items():
        med = [statistics.median(f[i] for f in figs) for i in range(6)]
        ratios = [
            statistics.median(
                a[i] / b[i] if b[i] else float("nan")
                for a, b in zip(figs, runs[first], strict=True)
            )
            for i in range(3)
        ]
        print(
            f"  {name:<8} {med[0]:9.3f} {ratios[0]:5.2f}x {med[1]:10.2f} {ratios[1]:5.2f}x"
            f" {med[2]:7.0f} {ratios[2]:5.2f}x  {med[3]:8.1f} {med[4]:7.1f} {med[5]:9.1f}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    rows = sm.ROWS + sm.LLAMA_ROWS  # llama-*: llama.cpp's server (llama_server.py build)
    ap.add_argument("--row", default="cont-64", choices=[r.name for r in rows])
    ap.add_argument("--workload", default="poisson100")
    ap.add_argument("--policies", default="naive,auto", type=lambda s: s.split(","))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="half-size workload")
    ap.add_argument("--sends", type=int, default=0, help="print auto's every N-th send")
    ap.add_argument("--slices", action="store_true", help="each run by when requests were sent")
    ap.add_argument("--batches", action="store_true", help="static rows: the server's batches")
    ap.add_argument("--changes", action="store_true", help="auto's changes of kind or B, and why")
    a = ap.parse_args()
    r = next(r for r in rows if r.name == a.row)
    a.batch_log = BatchLog.start() if a.batches else None  # before the server starts
    print(f"{r.name} / {a.workload}, time scale {r.scale}, policies {','.join(a.policies)}")
    with sm.serve(r) as (url, model):

        async def go(url: str, model: str) -> None:
            await main(a, url, model, await sm.calibrated(r, url, model))

        asyncio.run(go(url, model))
    if a.batch_log is not None:
        os.remove(a.batch_log.path)
    sys.exit(0)
