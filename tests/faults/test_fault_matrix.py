"""The fault matrix: every injected server fault x every client family (and the openai SDK's
Responses API, whose typed events the server sends for ``POST /v1/responses``).

Each cell: the documented exception (or ok) reaches the caller, the trace records the
outcome with the chunks that came before the fault, nothing hangs (bounded), and nothing
leaks (the server has no half-sent response, the loop no extra task).
"""

from __future__ import annotations

import asyncio
import gc

import anyio
import pytest

from fairstream import Recorder, ReferenceServer, ServerConfig
from fairstream.server._faults import KINDS, MID_STREAM

from ._matrix import FAMILIES, IDLE, one_request

# what reaches the caller, per client family (several names: versions differ)
EXPECTED: dict[str, dict[str, set[str]]] = {
    "disconnect_before_headers": {
        "httpx": {"TransportError"},
        "openai": {"APIConnectionError"},
        "langchain": {"OpenAIConnectionError", "APIConnectionError"},
        "responses": {"APIConnectionError"},
    },
    "slow_headers": {
        "httpx": {"TransportError"},
        "openai": {"APITimeoutError"},
        "langchain": {"OpenAITimeoutError", "APITimeoutError"},
        "responses": {"APITimeoutError"},
    },
    "status_429": {
        "httpx": {"ServerError"},
        "openai": {"RateLimitError"},
        "langchain": {"OpenAIRateLimitError", "RateLimitError"},
        "responses": {"RateLimitError"},
    },
    "status_503": {
        "httpx": {"ServerError"},
        "openai": {"InternalServerError"},
        "langchain": {"OpenAIAPIError", "InternalServerError"},
        "responses": {"InternalServerError"},
    },
    "disconnect_mid": {
        "httpx": {"TransportError"},
        "openai": {"APIConnectionError"},
        "langchain": {"OpenAIConnectionError", "APIConnectionError"},
        "responses": {"APIConnectionError"},
    },
    "bad_json": {
        "httpx": {"StreamProtocolError"},
        "openai": {"JSONDecodeError"},
        "langchain": {"JSONDecodeError"},
        "responses": {"JSONDecodeError"},
    },
    "stall": {
        "httpx": {"TransportError"},
        "openai": {"APITimeoutError"},
        "langchain": {"OpenAITimeoutError", "APITimeoutError"},
        "responses": {"APITimeoutError"},
    },
    # the Responses API's in-band ``error`` event: the SDK yields it and ends quietly, with no
    # response.completed, so the stream is incomplete
    "inband_error": {
        "httpx": {"ServerError"},
        "openai": {"APIError"},
        "langchain": {"APIError"},
        "responses": {"IncompleteStreamError"},
    },
    "no_done": {f: {"ok"} for f in FAMILIES},
    # cut without finish_reason, [DONE] or error. With `connection: close` framing the close
    # is a valid end of body: the SDKs end quietly on their own, fairstream raises.
    "cut_close": {f: {"IncompleteStreamError"} for f in FAMILIES},
    # with chunked framing the missing terminating chunk is a transport error to every client
    "cut_chunked": {
        "httpx": {"TransportError"},
        "openai": {"APIConnectionError"},
        "langchain": {"OpenAIConnectionError", "APIConnectionError"},
        "responses": {"APIConnectionError"},
    },
}


def test_every_fault_has_an_expectation() -> None:
    assert set(EXPECTED) == set(KINDS)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", KINDS)
async def test_fault(kind: str, family: str) -> None:
    # faults that take time take 3x the client's idle timeout: the client must give up
    config = ServerConfig(
        step_ms=20.0,
        per_seq_ms=0.0,
        prefill_ms_per_token=0.0,
        time_scale=0.5,
        faults=f"{kind}:at=1,after=3,seconds={3 * IDLE}",
        retry_after_s=0.1,
    )
    recorder = Recorder()
    before = len(asyncio.all_tasks())
    async with ReferenceServer(config) as server:
        with anyio.fail_after(10):  # no hang
            outcome, seen = await one_request(family, server.base_url, recorder)
        assert outcome in EXPECTED[kind][family], (kind, family, outcome)
        (trace,) = recorder.traces
        assert trace.outcome == ("ok" if outcome == "ok" else "error")
        if kind == "cut_close" or outcome == "IncompleteStreamError":
            assert trace.error_type == "IncompleteStream"
        elif outcome != "ok":  # LangChain re-wraps the SDK's error; the trace keeps the SDK's
            assert trace.error_type in EXPECTED[kind][family] | EXPECTED[kind]["openai"]
        chunks = len(trace.content_chunk_times)
        assert chunks == seen  # the trace has exactly the content the caller got
        if kind in MID_STREAM and kind != "no_done":
            assert 1 <= chunks < 12  # partial
        elif kind == "no_done":
            assert chunks == 12
        else:
            assert chunks == 0
        gc.collect()
        with anyio.fail_after(5):
            await server.driver.wait_until(
                lambda: (
                    server.driver.engine.stats.running == 0
                    and server.driver.engine.stats.waiting == 0
                )
            )
        with anyio.fail_after(5):  # the server sees the client's close on a later loop turn
            while server.busy_connections:  # noqa: ASYNC110 (a counter; no event to wait on)
                await anyio.sleep(0.01)
        assert server.busy_connections == 0  # no response left half-sent
    with anyio.fail_after(5):  # an abandoned async generator is finalized by a short task
        while len(asyncio.all_tasks()) > before:  # noqa: ASYNC110 (the loop's task set)
            await anyio.sleep(0.01)
    assert len(asyncio.all_tasks()) <= before  # no task left behind
