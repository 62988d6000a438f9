"""``probe(base_url, model)``: a short designed set of requests that makes the verdict fast.

Phase 1: four requests at once with very different lengths (does the short one end early,
         or is it held open?).
Phase 2: one long request, and short ones sent while it decodes (admitted now, or after it?
         do its chunks pause when they arrive?).
Phase 3: only while the batch size is still unknown: a ramp of simultaneous requests,
         whose first tokens come in waves the size of the batch.
Every request asks ``ignore_eos``; the analysis uses the lengths it observes, so servers
that ignore the flag are probed just as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio

from .._errors import FairstreamError, ServerError, first_error
from .._instrument._http import StreamClient
from .._recorder import Recorder
from .._trace import StreamTrace
from ._analyze import analyze
from ._report import BatchingReport, Evidence

__all__ = ["probe"]

CONFIDENT = 0.9
_PROMPT = "fairstream probe: write a long answer about batching."


async def probe(
    base_url: str,
    model: str,
    api_key: str | None = None,
    *,
    budget: int = 32,
    max_tokens: int = 64,
    recorder: Recorder | None = None,
) -> BatchingReport:
    """Probe the server at ``base_url`` (``.../v1``) with at most ``budget`` requests."""
    if budget < 9:
        raise ValueError("the probe needs a budget of at least 9 requests")
    if max_tokens < 16:
        raise ValueError("the probe needs max_tokens of at least 16")
    rec = recorder if recorder is not None else Recorder()
    async with StreamClient(base_url, api_key=api_key, recorder=rec, label="probe") as client:
        run = _Probe(client, model, budget, max_tokens)
        try:
            return await run.run()
        except BaseExceptionGroup as group:  # a phase's requests failed: raise the first
            first = first_error(group, FairstreamError)
            if first is None:
                raise
            raise first from group


class _Probe:
    def __init__(self, client: StreamClient, model: str, budget: int, max_tokens: int) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens
        self.left = budget
        self.traces: list[StreamTrace] = []
        self.continuous_usage = True
        self.phases: list[str] = []

    async def run(self) -> BatchingReport:
        long = self.max_tokens
        await self._together([long, long // 8, (5 * long) // 8, long // 4], "together")
        await self._newcomers(long, long // 8, 4)
        report = self._report()
        while self.left >= 4:
            if report.verdict == "static" and not report.batch_size_exact:
                n = min(self.left, 2 * (report.batch_size or 4) + 2)
                mix = (long // 4, long // 16, (3 * long) // 16, long // 8)
                await self._together([mix[i % 4] for i in range(n)], f"ramp of {n}")
            elif report.confidence < CONFIDENT and report.verdict != "sequential":
                await self._newcomers(long, long // 8, min(4, self.left - 1))
            else:
                break
            report = self._report()
        return report

    def _report(self) -> BatchingReport:
        report = analyze(self.traces)
        note = Evidence(
            "probe",
            len(self.traces),
            f"{len(self.traces)} probe requests: " + ", ".join(self.phases),
        )
        return replace(report, evidence=(*report.evidence, note))

    # -- phases ----------------------------------------------------------------------------
    async def _together(self, lengths: Sequence[int], name: str) -> None:
        lengths = list(lengths)[: self.left]
        self.phases.append(f"{name} ({len(lengths)})")
        async with anyio.create_task_group() as tg:
            for n in lengths:
                tg.start_soon(self._one, n, None)

    async def _newcomers(self, long: int, short: int, count: int) -> None:
        count = min(count, self.left - 1)
        self.phases.append(f"{count} short while one long decodes")
        started = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._one, long, started)
            await started.wait()
            step = _step_guess(self.traces)
            for i in range(count):
                if i:
                    await anyio.sleep(3 * step)
                tg.start_soon(self._one, short, None)

    async def _one(self, max_tokens: int, progress: anyio.Event | None) -> None:
        self.left -= 1
        options: dict[str, Any] = {"include_usage": True}
        if self.continuous_usage:
            options["continuous_usage_stats"] = True
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": _PROMPT}],
            "max_tokens": max(1, max_tokens),
            "ignore_eos": True,
            "temperature": 0,
            "stream_options": options,
        }
        try:
            trace = await self._stream(kwargs, progress)
        except ServerError as exc:
            if exc.status_code != 400 or not self.continuous_usage:
                raise
            self.continuous_usage = False  # a server that rejects vLLM's extension
            del options["continuous_usage_stats"]
            trace = await self._stream(kwargs, progress)
        self.traces.append(trace)

    async def _stream(self, kwargs: dict[str, Any], progress: anyio.Event | None) -> StreamTrace:
        contents = 0
        async with self.client.chat(**kwargs) as stream:
            async for chunk in stream:
                choices = chunk.get("choices") or ()
                if (
                    progress is not None
                    and choices
                    and (choices[0].get("delta") or {}).get("content")
                ):
                    contents += 1
                    if contents == 4:
                        progress.set()
        if progress is not None:
            progress.set()  # a stream shorter than four chunks still lets the phase go on
        assert stream.trace is not None
        return stream.trace


def _step_guess(traces: Sequence[StreamTrace]) -> float:
    """A rough decode step from the traces so far, to space the newcomers."""
    from ._view import estimate_step, views

    reqs, _ = views(traces)
    step = estimate_step(reqs)
    return step if step is not None else 0.02
