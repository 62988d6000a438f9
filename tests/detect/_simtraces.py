"""Synthetic chunk traces: the reference engines run in virtual time, chunked like the server.

What the HTTP server would write (role chunk with the first token, one chunk every
``tokens_per_chunk`` tokens, the rest flushed with the finish chunk) plus client-side
arrival jitter, so the detector can be checked on many configurations in milliseconds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fairstream import ServerConfig, StreamTrace, Usage
from fairstream.server._costmodel import NoisyCost
from fairstream.sim import SimRequest, simulate


@dataclass(frozen=True)
class Workload:
    """Arrivals spread over ``window`` seconds; half short, half long outputs."""

    n: int = 32
    window: float = 1.0
    short: tuple[int, int] = (4, 16)
    long: tuple[int, int] = (32, 96)
    prompt: tuple[int, int] = (16, 64)
    seed: int = 0

    def requests(self) -> list[SimRequest]:
        rng = random.Random(self.seed)
        out = []
        for i in range(self.n):
            lo, hi = self.short if i % 2 else self.long
            out.append(
                SimRequest(
                    arrival=rng.uniform(0.0, self.window),
                    prompt_tokens=rng.randint(*self.prompt),
                    output_tokens=rng.randint(lo, hi),
                    rid=f"q{i}",
                )
            )
        return out


def sim_traces(
    config: ServerConfig,
    workload: Workload,
    *,
    noise: float = 0.0,
    jitter: float = 0.03,
    seed: int = 0,
) -> list[StreamTrace]:
    """Traces of ``workload`` on an engine built from ``config`` (times in model seconds)."""
    engine = config.build_engine()
    if noise:
        engine.cost = NoisyCost(engine.cost, noise, seed)  # type: ignore[union-attr]
    run = simulate(engine, workload.requests())
    rng = random.Random(seed + 1)
    step = config.cost_model().step_seconds(1, 0)
    tpc = config.tokens_per_chunk

    def late(t: float) -> float:
        spike = step * rng.uniform(0.3, 1.0) if rng.random() < 0.02 else 0.0
        return t + abs(rng.gauss(0.0, jitter * step)) + spike

    traces = []
    for r in run.results:
        assert r.end is not None
        times, chars, toks = [], [], []
        sent = r.arrival + abs(rng.gauss(0.0, jitter * step))
        for i in range(tpc - 1, len(r.token_times), tpc):
            times.append(r.token_times[i])
            toks.append(tpc)
        rest = len(r.token_times) % tpc
        if rest:
            times.append(r.end)
            toks.append(rest)
        arrivals = sorted(late(t) for t in times)
        role = late(r.token_times[0])
        end = max(late(r.end), *(arrivals or [sent]))
        chunk_times = [min(role, arrivals[0]) if arrivals else role, *arrivals, end]
        chars = [0, *(5 * k for k in toks), 0]
        toks_all = [0, *toks, 0]
        traces.append(
            StreamTrace(
                request_id=r.rid,
                sent=sent,
                first_chunk=chunk_times[0],
                first_content=arrivals[0],
                last_content=arrivals[-1],
                finish_chunk=end,
                end=end,
                chunk_times=tuple(chunk_times),
                chunk_tokens=tuple(toks_all),
                chunk_chars=tuple(chars),
                chunk_tokens_estimated=True,
                usage=Usage(
                    r.prompt_tokens, len(r.token_times), r.prompt_tokens + len(r.token_times)
                ),
                finish_reason=r.finish_reason,
                client="sim",
            )
        )
    return traces
