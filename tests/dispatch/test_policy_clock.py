"""A policy sees every time on one clock: its events' and its traces' (a recorder counts from
its own origin, so a trace handed over as recorded would be seconds or hours off)."""

from __future__ import annotations

import anyio
from openai import AsyncOpenAI

import fairstream
from fairstream import Dispatcher, Fixed, Recorder, StreamClient, StreamTrace
from fairstream._dispatch._job import Job
from tests.conftest import ServerFactory

MSG = [{"role": "user", "content": "hi"}]


class Watching(Fixed):
    """``fixed(4)`` that keeps what each hook was told."""

    def __init__(self) -> None:
        super().__init__(4)
        self.seen: list[tuple[float, float, list[StreamTrace]]] = []  # (first token, done, traces)
        self._first: dict[int, float] = {}

    def on_first_token(self, job: Job, now: float) -> None:
        self._first[job.jid] = now

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self.seen.append((self._first.pop(job.jid), now, traces))


def _check(policy: Watching, runs: int) -> None:
    assert len(policy.seen) == runs
    for first, done, traces in policy.seen:
        (trace,) = traces
        assert trace.first_content is not None and trace.end is not None
        # the first token the policy heard of is the trace's first content, on the same clock
        assert abs(trace.first_content - first) < 0.005, (trace.first_content, first)
        assert trace.end <= done < trace.end + 0.5, (trace.end, done)


async def test_a_policy_gets_traces_on_its_own_clock(serve: ServerFactory) -> None:
    async with serve(mode="continuous", max_num_seqs=8) as server:
        policy = Watching()
        async with (
            Dispatcher(policy) as d,
            StreamClient(server.base_url, recorder=Recorder()) as client,
        ):

            async def one(n: int) -> None:
                await client.complete(
                    model=server.config.model, messages=MSG, max_tokens=n, ignore_eos=True
                )

            async with anyio.create_task_group() as tg:
                for n in (4, 8, 12):
                    tg.start_soon(lambda n=n: d.submit(lambda: one(n), expected_tokens=n))
        _check(policy, 3)

        routed = Watching()  # the openai SDK routed through the dispatcher by instrument()
        async with (
            Dispatcher(routed) as d,
            AsyncOpenAI(base_url=server.base_url, api_key="k") as raw,
        ):
            sdk = fairstream.instrument(raw, recorder=Recorder(), dispatcher=d)
            stream = await sdk.chat.completions.create(
                model=server.config.model, messages=MSG, max_tokens=6, stream=True
            )
            async for _ in stream:
                pass
        _check(routed, 1)
