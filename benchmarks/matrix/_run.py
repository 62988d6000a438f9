"""``run``: every cell of the plan, server by server, each server in its own process pinned to
its own core; progress with the time left; each finished cell appended to the results file."""

from __future__ import annotations

import asyncio
import fnmatch
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fairstream import ReferenceServer

from ._arms import arms, oracle, run_arm
from ._cells import WORKLOADS, Server, Size, fixed_limits, llama_servers, servers, workload
from ._measure import figures
from ._pin import Pinning
from ._results import Writer, header

__all__ = ["Plan", "plan", "run"]


class Plan:
    """The cells of a run: (server, workload) pairs, and the llama.cpp ones that cannot run."""

    def __init__(self, cells: list[tuple[Server, str]], skipped: list[str], llama: str) -> None:
        self.cells, self.skipped, self.llama = cells, skipped, llama

    @property
    def names(self) -> list[str]:
        return [f"{s.name} / {w}" for s, w in self.cells] + self.skipped


def plan(size: Size, scale: float, only: str | None, llama_missing: str | None) -> Plan:
    """Every server of ``size`` with every workload; ``only`` keeps the cells whose name
    (``server / workload``) matches the glob. llama.cpp's cells are listed either way."""
    ref = [(s, w) for s in servers(size, scale) for w in WORKLOADS]
    llama = [(s, w) for s in llama_servers(size) for w in WORKLOADS]
    if only:
        keep = [p.strip() for p in only.split(",")]

        def match(s: Server, w: str) -> bool:
            return any(fnmatch.fnmatch(f"{s.name} / {w}", p) for p in keep)

        ref = [c for c in ref if match(*c)]
        llama = [c for c in llama if match(*c)]
    if llama_missing:
        return Plan(ref, [f"{s.name} / {w}" for s, w in llama], llama_missing)
    return Plan(ref + llama, [], "built")


@contextmanager
def serve(server: Server, pin: Pinning) -> Iterator[tuple[str, str]]:
    """The server in its own process, pinned to the server's core: (base URL, model)."""
    if server.config is not None:
        with ReferenceServer.in_subprocess(server.config) as handle:
            pin.server_process(handle.pid)
            yield handle.base_url, server.config.model
        return
    from .. import llama_server

    threads = 1 if pin.server is not None else 2
    with llama_server.LlamaServer(slots=server.slots, threads=threads, ctx_per_slot=2048) as ls:
        assert ls.proc is not None
        pin.server_process(ls.proc.pid)
        yield ls.base_url, llama_server.MODEL_NAME


async def run_cell(
    server: Server, wl: str, url: str, model: str, step: float, seeds: int, size: Size
) -> dict[str, Any]:
    """Every arm on one workload, seed by seed; the cell's line for the results file."""
    scale = server.config.time_scale if server.config is not None else 1.0
    started = time.monotonic()
    per_seed, oracles = [], []
    for seed in range(seeds):
        jobs = workload(wl, seed, server, step, size)
        got = {}
        for arm in arms(fixed_limits(server)):
            traces = await run_arm(url, model, jobs, arm, scale)
            got[arm] = figures(traces, jobs, step, scale).as_dict()
        per_seed.append(got)
        oracles.append(oracle(server, jobs))
    return {
        "cell": f"{server.name} / {wl}",
        "server": server.name,
        "kind": server.kind,
        "workload": wl,
        "slots": server.slots,
        "step": step,
        "limits": fixed_limits(server),
        "seeds": per_seed,
        "oracle": oracles,
        "duration_s": round(time.monotonic() - started, 1),
    }


def run(out: Path, size: Size, seeds: int, scale: float, only: str | None, pin: Pinning) -> Path:
    """Run the plan into ``out`` (resuming it), printing progress; the file."""
    from ._llama import calibrate, missing

    todo = plan(size, scale, only, missing())
    writer = Writer(out, header(size, seeds, scale, pin.describe(), todo.names, todo.llama))
    pin.client_now()
    left = [(s, w) for s, w in todo.cells if f"{s.name} / {w}" not in writer.done]
    print(
        f"matrix {size}: {len(todo.cells)} cells, {len(todo.cells) - len(left)} already in {out},"
        f" {seeds} seed(s), time scale {scale}, {pin.describe()}"
    )
    for name in todo.skipped:
        print(f"  {name}: not run ({todo.llama})")
    took: list[float] = []
    total = len(left)
    for server in dict.fromkeys(s for s, _ in left):
        names = [w for s, w in left if s == server]

        async def one_server(
            url: str, model: str, server: Server = server, names: list[str] = names
        ) -> None:
            if server.config is not None:
                step = server.config.cost_model().step_seconds(1, 0)
            else:
                step = (await calibrate(url, model, server.slots)).step
            here: list[float] = []  # this server's cells: its others take about as long
            for wl in names:
                cell = await run_cell(server, wl, url, model, step, seeds, size)
                writer.add(cell)
                took.append(cell["duration_s"])
                here.append(cell["duration_s"])
                mine = len(names) - len(here)
                rest = mine * statistics.mean(here)
                rest += (total - len(took) - mine) * statistics.mean(took)
                print(
                    f"[{len(took)}/{total}] {cell['cell']}: {cell['duration_s']:.0f} s;"
                    f" about {rest / 60:.0f} min left",
                    flush=True,
                )

        with serve(server, pin) as (url, model):
            asyncio.run(one_server(url, model))
    return out
