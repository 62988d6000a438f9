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

Besides the matrix's policies, ``auto``'s variants tried side by side (``cell_policies.py``:
``auto-any-pause``, ``auto-churn``, ``auto-floor64``, ``auto:k=v``, ...).

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
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field

import cell_policies
import server_matrix as sm

from fairstream import StreamTrace
from fairstream._dispatch._tail import most_running


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
    policy = cell_policies.make(name)
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
    if isinstance(policy, cell_policies.WatchedAuto):
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
