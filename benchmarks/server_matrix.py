"""The dispatcher's judge: every policy against many servers, over real HTTP, as users run it.

Each server runs in its own process (the reference server in configurations the dispatcher
was not designed around, and llama.cpp's llama-server with ``--llama``); the client is the
openai SDK wrapped by ``fairstream.instrument`` (routed through a ``Dispatcher`` for the
dispatcher's policies). Per cell (server x workload x policy), medians over seeds:

- makespan / naive's; short requests' E2E p50 (from submission), naive's / the policy's, and
  long requests' (longer than the workload's median: what holding them for company costs);
- goodput (output tokens/s of requests whose first token came within the SLO of being sent)
  at 4 steps and at 0.5 model seconds, over the best fixed concurrency's (a sweep);
- TTFT p50 and p99 (from send); the oracle makespan (the engine in virtual time, told the
  true lengths, the better of shortest-first and longest-first all at once).

llama.cpp's step (the unit of the 4-step SLO and of TTFT in steps) and its step with every
slot busy (its open loops' capacity) are measured as its row starts (``matrix_llama.py``) and
kept on each workload's line: a constant from another machine judged a slower one wrongly.

Policies: ``naive`` (everything at once, in arrival order), ``sorted`` (everything at once,
shortest first), ``fixed:N`` for the best N of a sweep, ``auto``, ``auto-warm`` (``auto``
started from the same seed's all-at-once traces: ``Auto(prior=...)``), ``auto-pipelined``
(``Auto(just_in_time=False)``: a static server's next batch waits at the server, as in a
pool), ``auto-no-handover`` (``Auto(handover=0)``: a continuous server's slot refilled only
when its end reaches us), ``auto-startN`` (``Auto(start=N)``: another first round), ``auto-slo4``
(``Auto(ttft_slo=...)`` told the 4-step TTFT SLO the goodput counts), ``gradient`` and, where
the batch size is known, ``waves:B``. Then each cell of ``auto`` is checked against the dispatcher's
targets for its server's kind (``matrix_targets.py``: never worse than the better of naive and
sorted; static servers' short requests; continuous servers' goodput and TTFT), and a Markdown
table of every check ends the run.

Run:  python benchmarks/server_matrix.py [--quick] [--seeds 3] [--llama]
      [--rows a,b] [--workloads a,b] [--policies a,b] [--resume FILE]

The default size takes hours (all of it, with ``--llama``, more than 10 hours on 2 cores):
``--resume FILE`` keeps each row's finished workloads in FILE, and the same command run again
(same code, same arguments) skips them and prints their cells with the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import string
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from openai import AsyncOpenAI

import fairstream
from fairstream import Auto, Dispatcher, Recorder, ReferenceServer, ServerConfig, StreamTrace
from fairstream._dispatch._names import make_policy
from fairstream.sim import SimRequest, simulate

sys.path.insert(0, str(Path(__file__).parent))
import record
from matrix_llama import Calibration, measure
from matrix_report import TABLE, Cell, report, summary
from matrix_resume import Resume, calibrations, cells_of, code_hash, read_kept
from matrix_targets import Kind

# the reference server's time scale: 0.5 runs its 20 ms model steps in 10 ms, as every published
# run (1.0: real time, twice as long; at 0.25 the openai SDK client itself
# saturates a core with 64 streams and skews every figure)
SCALE = float(os.environ.get("FAIRSTREAM_MATRIX_SCALE", "0.5"))


@dataclass(frozen=True)
class Row:
    """One server: a reference-server config (or llama.cpp slots), and a step in model s."""

    name: str
    config: ServerConfig | None = None
    llama_slots: int = 0
    batch: int = 0  # the static batch size (waves:B), 0 where none
    jitter: float = 0.0  # client send jitter, model seconds
    kind: Kind = "continuous"  # which of the dispatcher's targets apply (matrix_targets.py)
    calib: Calibration | None = None  # llama.cpp: its step measured when the row starts

    @property
    def step(self) -> float:
        """A decode step alone, model seconds (llama.cpp: measured as the row starts; rows in
        older files took a fixed 18 ms)."""
        if self.config is None:
            return self.calib.step if self.calib else 0.018
        return self.config.cost_model().step_seconds(1, 0)

    @property
    def scale(self) -> float:
        return SCALE if self.config is not None else 1.0


def _ref(**kw: Any) -> ServerConfig:
    base = {"step_ms": 20.0, "per_seq_ms": 0.5, "prefill_ms_per_token": 0.02}
    return ServerConfig(time_scale=SCALE, **{**base, **kw})


ROWS = [
    Row("static-B4", _ref(mode="static", batch_size=4), batch=4, kind="static"),
    Row("static-B8", _ref(mode="static", batch_size=8), batch=8, kind="static"),
    Row("static-B16", _ref(mode="static", batch_size=16), batch=16, kind="static"),
    Row(
        "static-stream-B8",
        _ref(mode="static", batch_size=8, release="stream"),
        batch=8,
        kind="static",
    ),
    Row("cont-8", _ref(max_num_seqs=8)),
    Row("cont-16", _ref(max_num_seqs=16)),
    Row("cont-64", _ref(max_num_seqs=64)),
    Row("cont-16-kv", _ref(max_num_seqs=16, kv_tokens=1200)),
    Row("prefill-prio", _ref(max_num_seqs=16, prefill_priority=True)),
    Row("sequential", _ref(mode="sequential"), kind="sequential"),
    Row(
        "static-B8-noisy",
        _ref(mode="static", batch_size=8, tokens_per_chunk=3, step_noise=0.2),
        batch=8,
        jitter=0.01,
        kind="static",
    ),
    Row("cont-16-noisy", _ref(max_num_seqs=16, tokens_per_chunk=3, step_noise=0.2), jitter=0.01),
]
LLAMA_ROWS = [
    Row(f"llama-np{n}", llama_slots=n, kind="sequential" if n == 1 else "continuous")
    for n in (1, 4, 8)
]


@dataclass
class Job:
    arrival: float  # model seconds after the start
    max_tokens: int
    prompt_words: int = 16
    lead: str = "w"  # the prompt's first word, one byte (the prefill mix: each job its own)


LEADS = string.ascii_letters + string.digits  # llama.cpp reuses a slot's common prompt prefix


WORKLOADS = ("demo", "burst160", "prefill", "poisson50", "poisson100", "poisson150")


# the matrix's own names; any other goes to Dispatcher(policy=...) as it is
OWN_POLICIES = (
    "naive",
    "sorted",
    "best-fixed",
    "waves",
    "auto-warm",
    "auto-pipelined",
    "auto-no-handover",
    "auto-slo4",
)


def _known_policy(name: str) -> bool:
    if name in OWN_POLICIES or name.removeprefix("auto-start").isdigit():
        return True
    try:
        make_policy(name)
    except ValueError:
        return False
    return True


def _poisson(name: str) -> bool:
    """``poisson<N>``: open loop at N% of the server's capacity."""
    return name.startswith("poisson") and name[len("poisson") :].isdigit()


def workload(name: str, seed: int, row: Row, quick: bool) -> list[Job]:
    rng = random.Random(seed)
    k = 2 if quick else 1
    if name == "demo":  # the demo burst: 16 x 8 + 16 x 128 tokens, at once
        lengths = [8, 128] * (16 // k)
        rng.shuffle(lengths)
        return [Job(0.0, n) for n in lengths]
    if name == "burst160":  # 160 exponential lengths (mean 24, cap 96), at once
        return [Job(0.0, min(96, max(1, int(rng.expovariate(1 / 24))))) for _ in range(160 // k)]
    if name == "prefill":  # long prompts, short answers
        # each prompt leads with its own byte: llama.cpp's prompt cache made a prompt after a
        # longer one of the same text nearly free. It computes every token, so
        # its rows get a quarter of the words; the reference server's prompts stay whole
        div = 4 if row.config is None else 1
        return [
            Job(0.0, rng.randint(4, 16), rng.randint(300, 600) // div, LEADS[i])
            for i in range(48 // k)
        ]
    if _poisson(name):  # open loop at a share of the server's capacity
        share = int(name[len("poisson") :]) / 100
        cap = capacity(row)
        n = 96 // k
        t, jobs = 0.0, []
        for _ in range(n):
            t += rng.expovariate(share * cap)
            jobs.append(Job(t, rng.choice([8, 8, 8, 64])))
        return jobs
    raise ValueError(name)


def prompt(job: Job) -> str:
    """The job's prompt: its lead and ``w``, ``prompt_words`` words, two bytes a word."""
    return " ".join([job.lead] + ["w"] * (job.prompt_words - 1))


def capacity(row: Row) -> float:
    """Requests per model second the server completes when saturated with the Poisson mix."""
    if row.config is None:  # 24 tokens mean (the prompt's cost in), at the step with all busy
        full = row.calib.full if row.calib else row.step * 1.3  # older rows: an estimate
        return row.llama_slots / (24 * full)
    reqs = [SimRequest(0.0, 16, n) for n in [8, 8, 8, 64] * 24]
    run = simulate(row.config.with_(step_noise=0.0).build_engine(), reqs)
    return len(reqs) / run.makespan


def oracle(row: Row, jobs: list[Job]) -> float | None:
    """Best makespan the engine allows with known lengths (bursts only), model seconds."""
    if row.config is None or any(j.arrival for j in jobs):
        return None
    best = None
    for reverse in (False, True):
        order = sorted(jobs, key=lambda j: j.max_tokens, reverse=reverse)
        reqs = [SimRequest(0.0, j.prompt_words, j.max_tokens) for j in order]
        span = simulate(row.config.with_(step_noise=0.0).build_engine(), reqs).makespan
        best = span if best is None else min(best, span)
    return best


async def run_cell(
    base_url: str, model: str, row: Row, jobs: list[Job], policy: str | Auto, seed: int
) -> list[StreamTrace]:
    """One run: every job streamed through the instrumented openai SDK; the traces."""
    rec = Recorder()
    rng = random.Random(seed + 99)
    order = sorted(jobs, key=lambda j: (j.arrival, j.max_tokens)) if policy == "sorted" else jobs
    # the SDK's default retries, as users run it: llama.cpp's HTTP server closes a keep-alive
    # connection after a few requests, and a request sent on it meanwhile is retried
    async with AsyncOpenAI(base_url=base_url, api_key="k", max_retries=2, timeout=300) as raw:
        dispatcher = None if policy in ("naive", "sorted") else Dispatcher(policy)

        async def one(job: Job) -> None:
            if row.jitter:
                await anyio.sleep(rng.uniform(0, row.jitter) * row.scale)
            try:
                stream = await client.chat.completions.create(
                    model=model,
                    messages=[{"role": "user", "content": prompt(job)}],
                    max_tokens=job.max_tokens,
                    stream=True,
                    extra_body={"ignore_eos": True},
                )
                async for _ in stream:
                    pass
            except Exception:  # its trace records the failure; the cell counts it
                pass

        async def launch() -> None:
            async with anyio.create_task_group() as tg:
                t0 = time.perf_counter()
                for job in order:
                    wait = job.arrival * row.scale - (time.perf_counter() - t0)
                    if wait > 0:
                        await anyio.sleep(wait)
                    tg.start_soon(one, job)

        client = fairstream.instrument(raw, recorder=rec, dispatcher=dispatcher)
        if dispatcher is None:
            await launch()
        else:
            async with dispatcher:
                await launch()
    return rec.traces


Keep = Callable[[str, dict[str, Cell]], None]  # a finished workload's cells, kept as it ends


async def run_row(
    row: Row,
    base_url: str,
    model: str,
    names: list[str],
    policies: list[str],
    args: Any,
    keep: Keep | None = None,
) -> dict[str, dict[str, Cell]]:
    out: dict[str, dict[str, Cell]] = {}
    for wl in names:
        cells: dict[str, Cell] = {}
        for seed in range(args.seeds):
            jobs = workload(wl, seed, row, args.quick)
            sweep: dict[int, Cell] = {}
            for c in args.sweep if "best-fixed" in policies else ():
                if c <= len(jobs):
                    sweep[c] = Cell()
                    sweep[c].add(await run_cell(base_url, model, row, jobs, f"fixed:{c}", seed),
                                 row, jobs)  # fmt: skip
                    cells.setdefault(f"fixed:{c}", Cell()).take_last(sweep[c])  # the frontier
            ran = [c for c in sweep if sweep[c].good4]
            best = max(ran, key=lambda c: sweep[c].good4[-1]) if ran else None
            seen: list[StreamTrace] = []
            for policy in policies:
                if policy == "waves" and not row.batch:
                    continue
                name = f"waves:{row.batch}" if policy == "waves" else policy
                if policy == "best-fixed":
                    if best is None:
                        continue
                    cells.setdefault("best-fixed", Cell()).take_last(sweep[best])
                    continue
                # auto-warm: auto started from this seed's all-at-once traffic (Auto(prior=...))
                # auto-pipelined: a static server's next batch waits at the server (a pool's
                # mode) instead of going when the last one ends
                pol: str | Auto = name
                if policy == "auto-warm":
                    pol = Auto(prior=seen)
                elif policy == "auto-pipelined":
                    pol = Auto(just_in_time=False)
                elif policy == "auto-no-handover":
                    pol = Auto(handover=0)
                elif policy.startswith("auto-start"):  # e.g. auto-start8: another first round
                    pol = Auto(start=int(policy.removeprefix("auto-start")))
                elif policy == "auto-slo4":  # the 4-step TTFT SLO given: Auto(ttft_slo=...)
                    pol = Auto(ttft_slo=4 * row.step * row.scale)
                traces = await run_cell(base_url, model, row, jobs, pol, seed)
                if policy == "naive":
                    seen = traces
                cells.setdefault(policy, Cell()).add(traces, row, jobs)
            span = oracle(row, jobs)
            if span is not None:
                cells.setdefault("naive", Cell()).oracle.append(span)
        out[wl] = cells
        if keep is not None:
            keep(wl, cells)
    return out


@contextmanager
def serve(row: Row) -> Iterator[tuple[str, str]]:
    """The row's server in its own process, for as long as the block runs: (base URL, model)."""
    if row.config is not None:
        with ReferenceServer.in_subprocess(row.config) as handle:
            yield handle.base_url, row.config.model
        return
    from llama_server import MODEL_NAME, LlamaServer

    # the prefill mix's prompts run to 600 words, 2 tokens a word: 1024 tokens a slot refused
    # the longest third, so each slot gets 2048
    with LlamaServer(slots=row.llama_slots, ctx_per_slot=2048) as server:
        yield server.base_url, MODEL_NAME


async def calibrated(row: Row, base_url: str, model: str) -> Row:
    """llama.cpp's row with its step measured on this machine (a reference row as it is)."""
    if row.config is not None:
        return row
    row = replace(row, calib=await measure(base_url, model, row.llama_slots))
    print(f"{row.name}: {row.calib}", flush=True)
    return row


def run_server(
    row: Row, names: list[str], policies: list[str], args: Any, resume: Resume | None = None
) -> tuple[Row, dict[str, Any]]:
    """Start the row's server in its own process and run every workload and policy on it;
    the row as judged (llama.cpp's with its measured step) and its cells."""

    async def run(url: str, model: str) -> tuple[Row, dict[str, Any]]:
        judged = await calibrated(row, url, model)
        keep = None
        if resume is not None:
            keep = partial(resume.add, row.name, calib=judged.calib)
        return judged, await run_row(judged, url, model, names, policies, args, keep)

    with serve(row) as (url, model):
        return asyncio.run(run(url, model))


def report_kept(row: Row, results: dict[str, dict[str, Cell]], calibs: dict[str, Any]) -> list[str]:
    """``report`` per run of workloads judged with one step (llama.cpp's, as each was run)."""
    misses: list[str] = []
    for calib, same in itertools.groupby(results, key=calibs.get):
        judged = replace(row, calib=Calibration(**calib)) if calib else row
        misses += report(judged, {n: results[n] for n in same})
    return misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="half-size workloads, 1 seed")
    ap.add_argument("--seeds", type=int, default=None, help="3 (with --quick: 1)")
    ap.add_argument("--llama", action="store_true", help="add llama.cpp rows (1, 4, 8 slots)")
    ap.add_argument("--rows", default="")
    ap.add_argument("--workloads", default="demo,burst160,poisson50,poisson100,poisson150,prefill")
    ap.add_argument("--policies", default="naive,sorted,best-fixed,auto,auto-warm,gradient,waves")
    ap.add_argument("--sweep", default=None, help="1,4,8,16,32,64 (with --quick: 4,16)")
    ap.add_argument(
        "--resume", type=Path, metavar="FILE", help="finished rows kept in FILE: run again to go on"
    )
    ap.add_argument("--show", type=Path, metavar="FILE", help="print what FILE holds; run nothing")
    args = ap.parse_args(argv)
    if args.show is not None:
        record.current().keep = False  # it measures nothing: no results file
        return show(args.show)
    if args.seeds is None:
        args.seeds = 1 if args.quick else 3
    if args.sweep is None:  # given, it is used as given, --quick or not
        args.sweep = "4,16" if args.quick else "1,4,8,16,32,64"
    args.sweep = [int(c) for c in args.sweep.split(",") if c]
    rows = ROWS + (LLAMA_ROWS if args.llama else [])
    if args.rows:
        wanted = set(args.rows.split(","))
        if unknown := wanted - {r.name for r in rows}:
            ap.error(f"unknown rows {sorted(unknown)} (llama rows need --llama); rows: "
                     + ",".join(r.name for r in ROWS + LLAMA_ROWS))  # fmt: skip
        rows = [r for r in rows if r.name in wanted]
    names, policies = args.workloads.split(","), args.policies.split(",")
    if unknown := [n for n in names if n not in WORKLOADS and not _poisson(n)]:
        ap.error(f"unknown workloads {unknown}; workloads: {','.join(WORKLOADS)},poisson<N>")
    if unknown := [p for p in policies if not _known_policy(p)]:
        ap.error(f"unknown policies {unknown}; policies: {','.join(OWN_POLICIES)},auto-start<N>,"
                 "and Dispatcher's (auto, gradient, aimd, serial, fixed:N, waves:B)")  # fmt: skip
    print(f"server matrix: {len(rows)} servers, workloads {names}, {args.seeds} seed(s); "
          f"times in model seconds (reference server at time scale {SCALE})")  # fmt: skip
    resume = None
    if args.resume is not None:  # what shapes the figures: another run's rows are not mixed in
        shape = {k: getattr(args, k) for k in ("quick", "seeds", "workloads", "policies", "sweep")}
        resume = Resume(args.resume, {**shape, "scale": SCALE}, Cell)
        full = sum(set(names) <= set(wls) for wls in resume.done.values())
        begun = len(resume.done) - full
        print(
            f"resuming from {args.resume}: {full} row(s) done" + (f", {begun} begun" * (begun > 0))
        )
    misses: list[str] = []
    started = time.monotonic()
    try:
        for row in rows:
            kept = resume.get(row.name) if resume else {}
            calibs = dict(resume.calibs.get(row.name, {})) if resume else {}
            if todo := [n for n in names if n not in kept]:
                judged, cells = run_server(row, todo, policies, args, resume)
                kept.update(cells)
                if judged.calib:
                    calibs.update(dict.fromkeys(todo, asdict(judged.calib)))
            misses += report_kept(row, {n: kept[n] for n in names}, calibs)
            sys.stdout.flush()
    except KeyboardInterrupt:  # a long run stopped (Ctrl-C): the rows done still get their table
        print(f"\nstopped after {len({c.split(' / ')[0] for c, _ in TABLE})} of {len(rows)} rows")
    cells = len({m.split(": ")[0] for m in misses})
    print(f"\n{cells} auto cells miss a target, {len(misses)} misses"
          f" ({time.monotonic() - started:.0f} s)")  # fmt: skip
    for m in misses:
        print(f"  {m}")
    summary()
    return 0


def show(path: Path) -> int:
    """Print the table of every row a resume file holds, made by whatever code its header names
    (a file that can no longer be resumed still shows what it measured)."""
    header, done = read_kept(path)
    calibs = calibrations(path)
    if header.get("scale") != SCALE:
        raise SystemExit(f"{path} was run at time scale {header.get('scale')}: set"
                         f" FAIRSTREAM_MATRIX_SCALE={header.get('scale')} to show it")  # fmt: skip
    now = code_hash()
    made = header["code"] + (
        " (the code now)" if header["code"] == now else f" (the code now: {now})"
    )
    print(f"{path}: {len(done)} row(s), {header['seeds']} seed(s), made by src {made}")
    names = header["workloads"].split(",")
    misses: list[str] = []
    for row in ROWS + LLAMA_ROWS:
        kept = cells_of(done, row.name, Cell)
        if shown := {n: kept[n] for n in names if n in kept}:
            misses += report_kept(row, shown, calibs.get(row.name, {}))
    print(f"\n{len({m.split(': ')[0] for m in misses})} auto cells miss a target")
    summary()
    return 0


if __name__ == "__main__":
    record.main("server_matrix", main)
