"""The cells: servers of each kind the reference server has, at several sizes (and llama.cpp
when it is built), each meeting the workloads users meet, at quick or full size."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, replace
from typing import Literal

from fairstream import ServerConfig
from fairstream.sim import SimRequest, simulate

Kind = Literal["static", "continuous", "sequential"]
Size = Literal["tiny", "quick", "full"]  # tiny: the smoke test's, seconds a cell
WORKLOADS = ("burst", "poisson", "overload", "tenants")


@dataclass(frozen=True)
class Server:
    """One server to judge on: a reference-server config, or llama.cpp with ``slots``."""

    name: str
    kind: Kind
    slots: int  # what it runs at once: B, max_num_seqs, 1; llama.cpp's -np
    config: ServerConfig | None = None  # None: llama.cpp

    @property
    def llama(self) -> bool:
        return self.config is None


@dataclass(frozen=True)
class Job:
    """One request of a workload."""

    arrival: float  # model seconds after the start
    max_tokens: int
    tenant: str = "a"
    prompt_words: int = 16
    lead: str = "w"  # the prompt's first word: distinct users' prompts share no prefix

    @property
    def prompt(self) -> str:
        """``prompt_words`` words, two bytes each, led by the job's own byte (llama.cpp reuses
        a slot's cached prompt prefix: the same text again would cost it nothing)."""
        return " ".join([self.lead] + ["w"] * (self.prompt_words - 1))


LEADS = string.ascii_letters + string.digits


def reference(name: str, kind: Kind, slots: int, scale: float, **kw: object) -> Server:
    """A reference server: 20 ms model steps, a little per sequence and per prefill token."""
    opts: dict[str, object] = {"step_ms": 20.0, "per_seq_ms": 0.5, "prefill_ms_per_token": 0.02}
    if kind == "static":
        opts |= {"mode": "static", "batch_size": slots}
    elif kind == "sequential":
        opts |= {"mode": "sequential"}
    else:
        opts |= {"max_num_seqs": slots}
    return Server(name, kind, slots, ServerConfig(time_scale=scale, **(opts | kw)))  # type: ignore[arg-type]


def servers(size: Size, scale: float) -> list[Server]:
    """The reference servers of a run: every kind; more sizes with ``full``."""
    quick = [
        reference("static-B8", "static", 8, scale),
        reference("cont-16", "continuous", 16, scale),
        reference("cont-16-kv", "continuous", 16, scale, kv_tokens=1200),
        reference("prefill-prio", "continuous", 16, scale, prefill_priority=True),
        reference("sequential", "sequential", 1, scale),
    ]
    if size != "full":
        return quick
    return [
        reference("static-B4", "static", 4, scale),
        quick[0],
        reference("static-B16", "static", 16, scale),
        reference("static-stream-B8", "static", 8, scale, release="stream"),
        reference("cont-8", "continuous", 8, scale),
        quick[1],
        reference("cont-64", "continuous", 64, scale),
        *quick[2:],
    ]


def llama_servers(size: Size) -> list[Server]:
    """llama.cpp's server with 4 slots (quick), or 1, 4 and 8 (full)."""
    slots = (1, 4, 8) if size == "full" else (4,)
    return [Server(f"llama-np{n}", "sequential" if n == 1 else "continuous", n) for n in slots]


def capacity(server: Server, step: float) -> float:
    """Requests per model second the server completes, saturated with the open-loop mix."""
    if server.config is None:  # 24 tokens mean (the prompt's cost in), every slot busy
        return server.slots / (24 * step * 1.3)
    reqs = [SimRequest(0.0, 16, n) for n in [8, 8, 8, 64] * 24]
    return len(reqs) / simulate(server.config.build_engine(), reqs).makespan


def workload(name: str, seed: int, server: Server, step: float, size: Size) -> list[Job]:
    """The jobs of one workload: a mixed burst, arrivals over time at 70% of capacity, the
    same at 150% (overload), or tenants (one sends a long burst, two send short ones over
    time). Each job's prompt leads with its own byte."""
    jobs = _jobs(name, seed, server, step, size)
    return [replace(j, lead=LEADS[i % len(LEADS)]) for i, j in enumerate(jobs)]


def _jobs(name: str, seed: int, server: Server, step: float, size: Size) -> list[Job]:
    rng = random.Random(seed)
    # the other workloads: 48 requests in full (the whole matrix in under 2 hours on 2
    # cores), 32 in quick, 12 in tiny
    k = {"full": 2, "quick": 3, "tiny": 8}[size]
    if name == "burst":  # the demo's mix, half 8 tokens and half 128, at once: 32 in full,
        # 16 in quick (a static batch of 8 must see two batches of each length), 4 in tiny
        lengths = [8, 128] * {"full": 16, "quick": 8, "tiny": 2}[size]
        rng.shuffle(lengths)
        return [Job(0.0, n) for n in lengths]
    if name in ("poisson", "overload"):
        share = 0.7 if name == "poisson" else 1.5
        rate = share * capacity(server, step)
        t, jobs = 0.0, []
        for _ in range(96 // k):
            t += rng.expovariate(rate)
            jobs.append(Job(t, rng.choice([8, 8, 8, 64])))
        return jobs
    if name == "tenants":  # a heavy tenant's long burst; two others' short questions meanwhile
        heavy = [Job(0.0, 96, "heavy") for _ in range(24 // k)]
        rate = 0.5 * capacity(server, step)
        light, t = [], 0.0
        for i in range(24 // k):
            t += rng.expovariate(rate)
            light.append(Job(t, 8, "light-1" if i % 2 else "light-2"))
        return heavy + light
    raise ValueError(f"unknown workload {name!r}: one of {', '.join(WORKLOADS)}")


def fixed_limits(server: Server) -> list[int]:
    """The fixed limits swept in every cell: a quarter, all and twice the server's slots."""
    return sorted({max(1, server.slots // 4), server.slots, 2 * server.slots})
