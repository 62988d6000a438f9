"""What instrumentation costs per chunk: the same streams consumed raw and instrumented.

For each client family (openai SDK chat completions and Responses, LangChain ChatOpenAI,
plain httpx) this process
consumes the same workload raw and instrumented, alternating in rounds so drift in
machine speed hits both alike, and measures this process's CPU time
(``time.process_time``). It reports CPU microseconds per content chunk, the ratio
instrumented/raw and the microseconds added. "Raw httpx" is what a user would write by
hand: httpx + httpx-sse + json.loads.

Two sources of the streams:
- ``--source replay`` (default): the reference server's own chunk bytes, served by the
  HTTP library's in-process mock transport (httpx or httpx2, whichever the SDK runs on),
  one SSE event per read. Everything the client does per chunk is real; what is gone is
  the noise of a live socket (how many events one read happens to batch changes the
  syscall CPU per chunk by more than the few microseconds being measured).
- ``--source live``: the reference server in its own process over loopback.

Run:  python benchmarks/overhead.py [--short 16] [--long 512] [--streams 10] [--pairs 40]
Goals (added per chunk): openai <= 2 us and <= 1.03x, Responses <= 2.5 us, LangChain <= 4 us.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import record
from httpx_sse import aconnect_sse
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder, ReferenceServer, ServerConfig, StreamClient
from fairstream.server._canned import canned_client, chat_events, response_events

MODEL = "fairstream-ref"
MSG = [{"role": "user", "content": "overhead"}]
REPLAY_URL = "http://replay.invalid/v1"
Runner = Callable[[int, int], Awaitable[int]]


def _sdk_http_module() -> Any:
    """httpx2 under openai 3.x, httpx under 2.x: whatever AsyncOpenAI's client is built on."""
    for cls in type(AsyncOpenAI(api_key="k")._client).__mro__:
        root = cls.__module__.split(".")[0]
        if root in ("httpx", "httpx2"):
            return importlib.import_module(root)
    raise RuntimeError("cannot tell which HTTP library the openai SDK uses")


def runners(base_url: str, replay: bool) -> dict[str, tuple[Runner, Runner]]:
    """family -> (raw runner, instrumented runner); each returns content chunks seen."""
    rec = Recorder(keep=None)
    sdk_http = _sdk_http_module()

    def oa() -> AsyncOpenAI:
        extra = {"http_client": canned_client(sdk_http)} if replay else {}
        return AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, **extra)

    raw_oa = oa()
    inst_oa = fairstream.instrument(oa(), recorder=rec)

    def lc() -> ChatOpenAI:
        extra = {"http_async_client": canned_client(sdk_http)} if replay else {}
        return ChatOpenAI(
            model=MODEL,
            base_url=base_url,
            api_key="k",
            stream_usage=True,  # type: ignore[arg-type]
            max_retries=0,
            **extra,
        )

    raw_lc = lc()
    inst_lc = fairstream.instrument(lc(), recorder=rec)
    if replay:
        http = canned_client(httpx)
        lean = StreamClient(base_url, recorder=rec, http=canned_client(httpx))
    else:
        http = httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1000))
        lean = StreamClient(base_url, recorder=rec, max_connections=1000)

    def openai_runner(client: Any) -> Runner:
        async def one(tokens: int) -> int:
            n = 0
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=MSG,
                max_tokens=tokens,
                stream=True,
                stream_options={"include_usage": True},
                extra_body={"ignore_eos": True},
            )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    n += 1
            return n

        return _fan_out(one)

    def responses_runner(client: Any) -> Runner:
        async def one(tokens: int) -> int:
            n = 0
            stream = await client.responses.create(
                model=MODEL,
                input=MSG[0]["content"],
                max_output_tokens=tokens,
                stream=True,
                extra_body={"ignore_eos": True},
            )
            async for event in stream:
                if event.type == "response.output_text.delta":
                    n += 1
            return n

        return _fan_out(one)

    def langchain_runner(llm: Any) -> Runner:
        async def one(tokens: int) -> int:
            n = 0
            async for msg in llm.astream(
                MSG[0]["content"], max_tokens=tokens, extra_body={"ignore_eos": True}
            ):
                if msg.content:
                    n += 1
            return n

        return _fan_out(one)

    async def raw_httpx(tokens: int) -> int:
        body = {
            "model": MODEL,
            "messages": MSG,
            "max_tokens": tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "ignore_eos": True,
        }
        n = 0
        async with aconnect_sse(http, "POST", base_url + "/chat/completions", json=body) as src:
            async for event in src.aiter_sse():
                if event.data == "[DONE]":
                    break
                chunk = json.loads(event.data)
                if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                    n += 1
        return n

    async def lean_httpx(tokens: int) -> int:
        n = 0
        async with lean.chat(model=MODEL, messages=MSG, max_tokens=tokens, ignore_eos=True) as s:
            async for chunk in s:
                if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                    n += 1
        return n

    return {
        "openai": (openai_runner(raw_oa), openai_runner(inst_oa)),
        "responses": (responses_runner(raw_oa), responses_runner(inst_oa)),
        "langchain": (langchain_runner(raw_lc), langchain_runner(inst_lc)),
        "httpx": (_fan_out(raw_httpx), _fan_out(lean_httpx)),
    }


def _fan_out(one: Callable[[int], Awaitable[int]]) -> Runner:
    async def run(streams: int, tokens: int) -> int:
        counts = await asyncio.gather(*(one(tokens) for _ in range(streams)))
        return sum(counts)

    return run


async def _timed(fn: Runner, streams: int, tokens: int) -> tuple[float, int]:
    """CPU seconds and content chunks of one run, with the collector held off."""
    gc.collect()
    gc.disable()  # a collection landing in one variant's run is noise, not cost
    try:
        t0 = time.process_time()
        n = await fn(streams, tokens)
        return time.process_time() - t0, n
    finally:
        gc.enable()


async def measure(
    base_url: str,
    families: list[str],
    lengths: tuple[int, int],
    streams: int,
    pairs: int,
    replay: bool,
) -> list[dict[str, float]]:
    """Per chunk and per request, raw and instrumented, from paired runs at two lengths.

    Each pair runs ``streams`` concurrent streams of ``short`` and of ``long`` chunks, raw and
    instrumented (order alternating). The slope between the two lengths is what one chunk
    costs, with what a request costs once (the call, the trace's start and end) cancelled out;
    that once-per-request cost is reported on its own. The machine's speed drifts (a shared
    VM), so each pair gives its figures under near-equal conditions and the medians over pairs
    are reported.
    """
    table = runners(base_url, replay)
    short, long = lengths
    rows = []
    for family in families:
        raw, inst = table[family]
        for fn in (raw, inst, raw, inst):  # warm-up: imports, connections, the SDK's caches
            await fn(streams, short)
        per: dict[str, list[float]] = {k: [] for k in ("raw", "inst", "added", "ratio", "req")}
        total = 0
        for p in range(pairs):
            order = [(raw, short), (inst, short), (raw, long), (inst, long)]
            cpu: dict[tuple[Runner, int], float] = {}
            for fn, n in order if p % 2 == 0 else order[::-1]:
                cpu[fn, n], seen = await _timed(fn, streams, n)
                if seen != streams * n:
                    raise RuntimeError(f"{family}: {seen} chunks seen, {streams * n} sent")
                total += seen if fn is inst else 0
            extra = streams * (long - short)
            r = (cpu[raw, long] - cpu[raw, short]) / extra * 1e6
            i = (cpu[inst, long] - cpu[inst, short]) / extra * 1e6
            per["raw"].append(r)
            per["inst"].append(i)
            per["added"].append(i - r)
            per["ratio"].append(i / r)
            once = (cpu[inst, short] - cpu[raw, short]) / streams * 1e6 - (i - r) * short
            per["req"].append(once)
        rows.append(
            {
                "family": family,
                "chunks": total,
                "raw_us": statistics.median(per["raw"]),
                "inst_us": statistics.median(per["inst"]),
                "ratio": statistics.median(per["ratio"]),
                "added_us": statistics.median(per["added"]),
                "added_us_q1": statistics.quantiles(per["added"], n=4)[0] if pairs > 1 else 0.0,
                "added_us_q3": statistics.quantiles(per["added"], n=4)[2] if pairs > 1 else 0.0,
                "per_request_us": statistics.median(per["req"]),
            }
        )
    return rows


# -- the added work alone -----------------------------------------------------------------
# On a shared VM the end-to-end CPU per chunk of an SDK path (~200 us) drifts by more than
# the few microseconds fairstream adds, even in paired runs. So the added work is also
# measured alone: the same prebuilt SDK chunks (and the same raw event bytes, so wire
# stamping runs too) iterated through the SDK-shaped stream raw and instrumented.


class _FakeResponse:
    def __init__(self, frames: list[bytes]) -> None:
        self._frames = frames

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for frame in self._frames:
            yield frame


class _FakeSdkStream:
    """Shaped like openai's AsyncStream: each chunk is handed out after its bytes are read."""

    def __init__(self, chunks: list[Any], frames: list[bytes]) -> None:
        self.response = _FakeResponse(frames)
        self._chunks = iter(chunks)
        self._bytes: AsyncIterator[bytes] | None = None

    def __aiter__(self) -> _FakeSdkStream:
        return self

    async def __anext__(self) -> Any:
        if self._bytes is None:
            self._bytes = self.response.aiter_bytes()
        await self._bytes.__anext__()
        try:
            return next(self._chunks)
        except StopIteration:
            raise StopAsyncIteration from None

    async def close(self) -> None:
        pass

    async def __aenter__(self) -> _FakeSdkStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


class _FakeCompletions:
    """Shaped like the SDK's ``chat.completions``: streams prebuilt chunks."""

    def __init__(self, chunks: list[Any], frames: list[bytes]) -> None:
        self.chunks, self.frames = chunks, frames

    async def create(self, **kwargs: Any) -> _FakeSdkStream:
        return _FakeSdkStream(self.chunks, self.frames)


def _fake_root(chunks: list[Any], frames: list[bytes]) -> Any:
    """A real ``AsyncOpenAI`` (fairstream instruments only those) whose ``chat.completions``
    streams the prebuilt ``chunks``; its copies (``with_options``) stream the same."""
    completions = _FakeCompletions(chunks, frames)

    class FakeRoot(AsyncOpenAI):
        @property
        def chat(self) -> Any:  # type: ignore[override]
            return type("Chat", (), {"completions": completions})()

        @property
        def completions(self) -> Any:  # type: ignore[override]
            return completions

    return FakeRoot(base_url="http://fake.invalid/v1", api_key="k")


async def _sdk_objects(kind: str, n: int) -> tuple[list[Any], list[bytes]]:
    """One canned stream of ``n`` chunks as the SDK hands it out (its own objects, chat chunks
    or Responses events), and the event bytes they came from, one a read."""
    sdk = AsyncOpenAI(
        base_url=REPLAY_URL, api_key="k", http_client=canned_client(_sdk_http_module())
    )
    stream: Any
    if kind == "chat":
        frames = [f async for f in chat_events(n)][:-1]  # ([DONE] makes no object)
        stream = await sdk.chat.completions.create(
            model=MODEL,
            messages=MSG,  # type: ignore[arg-type]
            max_tokens=n,
            stream=True,
            stream_options={"include_usage": True},
        )
    else:
        frames = [f async for f in response_events(n)]
        stream = await sdk.responses.create(
            model=MODEL, input="x", max_output_tokens=n, stream=True
        )
    objects = [o async for o in stream]
    await sdk.close()
    return objects, frames


async def _sdk_stream_alone(kind: str, n: int, repeats: int) -> tuple[float, float]:
    """An SDK stream's prebuilt objects, raw and through fairstream's wrapper of that kind."""
    from fairstream._instrument._openai import InstrumentedStream
    from fairstream._instrument._responses import InstrumentedResponseStream

    objects, frames = await _sdk_objects(kind, n)
    wrap = InstrumentedStream if kind == "chat" else InstrumentedResponseStream
    rec = Recorder(keep=None)

    def content(o: Any) -> bool:
        if kind == "chat":
            return bool(o.choices and o.choices[0].delta.content)
        return bool(o.type == "response.output_text.delta")

    async def raw() -> int:
        seen = 0
        async for o in _FakeSdkStream(objects, frames):
            seen += content(o)
        return seen

    async def inst() -> int:
        seen = 0
        builder = rec.start(client="openai", model=MODEL)
        builder.mark_sent()
        async for o in wrap(_FakeSdkStream(objects, frames), builder):
            seen += content(o)
        return seen

    return await _alone(raw, inst, repeats)


async def _langchain_alone(n: int, repeats: int) -> tuple[float, float]:
    rec = Recorder(keep=None)
    chunks, frames = await _sdk_objects("chat", n)

    def model() -> Any:
        root = _fake_root(chunks, frames)
        return ChatOpenAI(
            model=MODEL,
            api_key="k",  # type: ignore[arg-type]
            base_url=str(root.base_url),
            stream_usage=True,
            root_async_client=root,
            async_client=root.chat.completions,
        )

    raw_llm, inst_llm = model(), fairstream.instrument(model(), recorder=rec)

    def run(llm: Any) -> Callable[[], Awaitable[int]]:
        async def go() -> int:
            return sum([1 async for msg in llm.astream("x") if msg.content])

        return go

    return await _alone(run(raw_llm), run(inst_llm), repeats)


async def _alone(
    raw: Callable[[], Awaitable[int]], inst: Callable[[], Awaitable[int]], repeats: int
) -> tuple[float, float]:
    """Median CPU us per chunk of raw and of instrumented, interleaved."""
    for fn in (raw, inst):
        await fn()
    r_us: list[float] = []
    i_us: list[float] = []
    for k in range(repeats):
        for name, fn in (("r", raw), ("i", inst)) if k % 2 == 0 else (("i", inst), ("r", raw)):
            gc.collect()
            gc.disable()
            try:
                t0 = time.process_time()
                seen = await fn()
                us = (time.process_time() - t0) / seen * 1e6
            finally:
                gc.enable()
            (r_us if name == "r" else i_us).append(us)
    return statistics.median(r_us), statistics.median(i_us)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", type=int, default=16, help="chunks per short stream")
    ap.add_argument("--long", type=int, default=512, help="chunks per long stream")
    ap.add_argument("--streams", type=int, default=10, help="concurrent streams per run")
    ap.add_argument("--pairs", type=int, default=40, help="raw/instrumented run pairs")
    ap.add_argument("--source", choices=["replay", "live"], default="replay")
    ap.add_argument("--families", default="openai,responses,langchain,httpx")
    args = ap.parse_args(argv)
    if not 0 < args.short < args.long:
        ap.error("--short must be positive and below --long")
    cfg = ServerConfig(
        step_ms=1.0,
        per_seq_ms=0.0,
        prefill_ms_per_token=0.0,
        max_tokens_cap=100_000,
        max_model_len=200_000,
    )
    families = args.families.split(",")
    unknown = set(families) - {"openai", "responses", "langchain", "httpx"}
    if unknown:
        ap.error(f"unknown families: {', '.join(sorted(unknown))}")
    lengths = (args.short, args.long)
    if args.source == "replay":
        url = REPLAY_URL
        rows = asyncio.run(measure(url, families, lengths, args.streams, args.pairs, True))
    else:
        with ReferenceServer.in_subprocess(cfg) as handle:
            rows = asyncio.run(
                measure(handle.base_url, families, lengths, args.streams, args.pairs, False)
            )
    print(
        f"instrumentation overhead ({args.source}): client CPU, {args.streams} concurrent "
        f"streams of {args.short} and of {args.long} chunks, medians over {args.pairs} pairs;"
    )
    print("per chunk is the slope between the two lengths, per request what is left once")
    print(
        f"{'family':<10} {'raw us':>8} {'instr. us':>10} {'ratio':>7} {'added us':>9} "
        f"{'(q1..q3)':>14} {'per request us':>15}"
    )
    for r in rows:
        spread = f"{r['added_us_q1']:.2f}..{r['added_us_q3']:.2f}"
        print(
            f"{r['family']:<10} {r['raw_us']:>8.2f} {r['inst_us']:>10.2f} {r['ratio']:>7.3f} "
            f"{r['added_us']:>9.2f} {spread:>14} {r['per_request_us']:>15.1f}"
        )
    figures = record.current().figures
    figures["end_to_end"] = {r["family"]: r for r in rows}
    alone = asyncio.run(_added_alone(families, args.long, args.pairs))
    figures["added_alone"] = {f: {"raw_us": r, "inst_us": i} for f, (r, i) in alone.items()}
    if alone:
        print("\nthe added work alone (the same prebuilt SDK objects and bytes through the SDK's")
        print("stream shape, raw vs instrumented; no HTTP, no parsing):")
        print(f"{'family':<10} {'raw us':>8} {'instr. us':>10} {'added us':>9}")
        for family, (r_us, i_us) in alone.items():
            print(f"{family:<10} {r_us:>8.2f} {i_us:>10.2f} {i_us - r_us:>9.2f}")
    jsonl_cost(200 if args.pairs < 5 else 5000)
    return 0


def jsonl_cost(n: int, chunks: int = 128) -> None:
    """What ``JsonlSink`` costs per trace (its one JSON encoding and one write), in the task
    that ends the stream; fsync runs on its own thread at most once a second."""
    import tempfile
    from pathlib import Path

    times = tuple(i * 0.015 for i in range(chunks))
    trace = fairstream.StreamTrace(
        request_id="r",
        model=MODEL,
        client="openai",
        sent=0.0,
        first_chunk=0.0,
        first_content=0.0,
        last_content=times[-1],
        finish_chunk=times[-1],
        end=times[-1],
        chunk_times=times,
        chunk_tokens=(1,) * chunks,
        chunk_chars=(5,) * chunks,
        usage=fairstream.Usage(32, chunks, 32 + chunks),
        finish_reason="length",
    )
    with tempfile.TemporaryDirectory() as tmp:
        sink = fairstream.JsonlSink(Path(tmp) / "t.jsonl")
        bare = Recorder()
        with_sink = Recorder([sink])
        best: dict[str, float] = {}
        for _ in range(5):  # alternate, keep the best of 5 (noise only adds)
            for name, rec in (("bare", bare), ("jsonl", with_sink)):
                t0 = time.process_time()
                for _ in range(n):
                    rec.emit(trace)
                best[name] = min(best.get(name, float("inf")), (time.process_time() - t0) / n)
        sink.close()
    added = (best["jsonl"] - best["bare"]) * 1e6
    record.current().figures["jsonl_us_per_trace"] = added
    print(f"\nJsonlSink: {added:.1f} us CPU per trace of {chunks} chunks", end="")
    print(f" ({added / chunks:.2f} us per chunk), over {n} traces, best of 5")


async def _added_alone(families: list[str], n: int, pairs: int) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    repeats = max(3, min(40, pairs))  # (each repeat collects garbage first: 0.1 s a time)
    if "openai" in families:
        out["openai"] = await _sdk_stream_alone("chat", n, repeats)
    if "responses" in families:
        out["responses"] = await _sdk_stream_alone("responses", n, repeats)
    if "langchain" in families:
        out["langchain"] = await _langchain_alone(n, repeats)
    return out


if __name__ == "__main__":
    record.main("overhead", main)
