"""Send a workload to a server and keep every trace: naive or through a Dispatcher.

Load profiles: ``concurrency`` (closed loop, at most N in flight, FIFO), ``rate``
(open loop, Poisson arrivals), or everything at once (``concurrency=None, rate=None``).
With a policy the load goes through :class:`~fairstream.Dispatcher` instead of a
semaphore, so its traces carry client queue time.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..._dispatch._dispatcher import Dispatcher
from ..._dispatch._policy import Policy
from ..._errors import FairstreamError
from ..._instrument._http import StreamClient
from ..._recorder import Recorder
from ..._trace import StreamTrace
from ._workload import RequestSpec

__all__ = ["RunResult", "run_workload"]


@dataclass(slots=True)
class RunResult:
    """The traces of one run, its wall time, and what the dispatcher ended on."""

    traces: list[StreamTrace]
    wall: float
    policy: str
    report: Any = None
    client_cpu: float = 0.0  # this process's CPU seconds during the run (all threads)

    @property
    def client_cpu_share(self) -> float:
        """The client's CPU over the run's wall time: 1.0 is one core kept busy."""
        return self.client_cpu / self.wall if self.wall > 0 else 0.0

    def submit_e2e(self, t: StreamTrace) -> float | None:
        """End minus submission (client queue included), what the caller waits."""
        start = t.enqueued if t.enqueued is not None else t.sent
        return None if start is None or t.end is None else t.end - start


async def run_workload(
    base_url: str,
    model: str,
    specs: Sequence[RequestSpec],
    *,
    api_key: str | None = None,
    policy: str | Policy | None = None,
    concurrency: int | None = None,
    rate: float | None = None,
    ignore_eos: bool = True,
    seed: int = 0,
    recorder: Recorder | None = None,
    progress: Callable[[], None] | None = None,
) -> RunResult:
    """Run ``specs`` against ``base_url``; every request leaves a trace, failures too."""
    rec = recorder if recorder is not None else Recorder()
    start_count = len(rec.traces)
    limiter = anyio.Semaphore(concurrency) if concurrency and policy is None else None
    rng = random.Random(seed)
    t0, cpu0 = time.perf_counter(), time.process_time()
    extra: dict[str, Any] = {"ignore_eos": True} if ignore_eos else {}
    async with StreamClient(base_url, api_key=api_key, recorder=rec) as client:
        dispatcher = Dispatcher(policy) if policy is not None else None

        async def one(spec: RequestSpec) -> None:
            kwargs = {"model": model, "label": spec.label, **spec.body, **extra}
            try:
                if dispatcher is not None:
                    await dispatcher.submit(
                        functools.partial(client.complete, **kwargs),
                        expected_tokens=spec.max_tokens,
                        label=spec.label,
                    )
                elif limiter is not None:
                    async with limiter:
                        await client.complete(**kwargs)
                else:
                    await client.complete(**kwargs)
            except FairstreamError:
                pass  # the trace records the failure
            finally:
                if progress is not None:
                    progress()

        async def launch(tg: anyio.abc.TaskGroup) -> None:
            for spec in specs:
                if rate:
                    await anyio.sleep(rng.expovariate(rate))  # the open-loop arrival process
                tg.start_soon(one, spec)

        if dispatcher is not None:
            async with dispatcher, anyio.create_task_group() as tg:
                await launch(tg)
            name, report = dispatcher.policy, dispatcher.report
        else:
            async with anyio.create_task_group() as tg:
                await launch(tg)
            name = f"naive({concurrency or 'all'})"
            report = None
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return RunResult(rec.traces[start_count:], wall, name, report, cpu)
