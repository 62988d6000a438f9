"""The arms of a cell: each sends the workload over real HTTP through the instrumented openai
SDK, as users run it; the oracle runs the same engine in virtual time, told every length."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import AsyncIterator

import anyio
from openai import AsyncOpenAI

import fairstream
from fairstream import Dispatcher, Recorder, StreamTrace
from fairstream.sim import SimRequest, simulate

from ._cells import Job, Server

__all__ = ["arms", "oracle", "run_arm"]


def arms(limits: list[int]) -> list[str]:
    """Every arm of a cell, in the order they run. ``naive-again`` repeats naive: the two
    differ only by the machine's noise, which ``compare`` needs."""
    return ["naive", "sorted", *(f"fixed:{n}" for n in limits), "auto", "naive-again"]


async def run_arm(
    base_url: str, model: str, jobs: list[Job], arm: str, scale: float
) -> list[StreamTrace]:
    """One run of ``arm`` on the workload; every request's trace."""
    recorder = Recorder()
    order = sorted(jobs, key=lambda j: (j.arrival, j.max_tokens)) if arm == "sorted" else jobs
    policy = arm if arm.startswith(("fixed:", "auto")) else None
    async with AsyncOpenAI(base_url=base_url, api_key="k", max_retries=2, timeout=300) as raw:
        client = fairstream.instrument(raw, recorder=recorder)
        dispatcher = Dispatcher(policy) if policy else None

        @contextlib.asynccontextmanager
        async def admitted(job: Job) -> AsyncIterator[None]:
            if dispatcher is None:
                yield
                return
            async with dispatcher.slot(expected_tokens=job.max_tokens, key=job.tenant):
                yield

        async def one(job: Job) -> None:
            try:
                async with admitted(job):
                    stream = await client.chat.completions.create(
                        model=model,
                        messages=[{"role": "user", "content": job.prompt}],
                        max_tokens=job.max_tokens,
                        stream=True,
                        extra_body={"ignore_eos": True},
                    )
                    async for _ in stream:
                        pass
            except Exception:  # its trace records the failure; the figures count it
                pass

        async def launch() -> None:
            async with anyio.create_task_group() as tg:
                t0 = time.perf_counter()
                for job in order:
                    wait = job.arrival * scale - (time.perf_counter() - t0)
                    if wait > 0:
                        await anyio.sleep(wait)
                    tg.start_soon(one, job)

        if dispatcher is None:
            await launch()
        else:
            async with dispatcher:
                await launch()
    return recorder.traces


def oracle(server: Server, jobs: list[Job]) -> dict[str, float] | None:
    """The engine in virtual time with every length known: the better (by makespan) of
    shortest-first and longest-first, each request sent at its arrival. None for llama.cpp."""
    if server.config is None:
        return None
    best: dict[str, float] | None = None
    for reverse in (False, True):
        order = sorted(jobs, key=lambda j: (j.arrival, -j.max_tokens if reverse else j.max_tokens))
        reqs = [SimRequest(j.arrival, j.prompt_words, j.max_tokens) for j in order]
        run = simulate(server.config.with_(time_scale=1.0).build_engine(), reqs)
        cut = statistics.median(j.max_tokens for j in jobs)
        e2e = [(r.end or 0.0) - r.arrival for r in run.results]
        short = [e for e, r in zip(e2e, run.results, strict=True) if r.output_tokens <= cut]
        got = {
            "makespan": run.makespan,
            "e2e_p50": statistics.median(e2e),
            "short_p50": statistics.median(short),
        }
        if best is None or got["makespan"] < best["makespan"]:
            best = got
    return best
