"""What a real server cannot easily send, on the plain httpx path only (respx)."""

from __future__ import annotations

import httpx
import pytest
import respx

from fairstream import (
    IncompleteStreamError,
    Recorder,
    ServerError,
    StreamClient,
    StreamProtocolError,
)

URL = "http://llm.test/v1"
ROLE = b'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
TOKEN = b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":" hi"}}]}\n\n'
EMPTY = b'data: {"id":"c1","choices":[{"index":0,"delta":{}}]}\n\n'
FINISH = b'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'


async def run(body: bytes) -> tuple[Recorder, list[dict[str, object]], BaseException | None]:
    rec = Recorder()
    got: list[dict[str, object]] = []
    error: BaseException | None = None
    with respx.mock:
        respx.post(URL + "/chat/completions").mock(
            return_value=httpx.Response(
                200, content=body, headers={"content-type": "text/event-stream"}
            )
        )
        async with StreamClient(URL, recorder=rec) as client:
            try:
                async with client.chat(model="m", messages=[{"role": "user", "content": "x"}]) as s:
                    async for chunk in s:
                        got.append(chunk)
            except Exception as exc:
                error = exc
    return rec, got, error


async def test_bad_json_is_a_protocol_error_with_the_chunks_so_far() -> None:
    rec, got, error = await run(ROLE + TOKEN + b"data: {not json\n\n" + TOKEN)
    assert isinstance(error, StreamProtocolError)
    assert error.trace is not None and error.trace.outcome == "error"
    assert len(got) == 2
    (trace,) = rec.traces
    assert trace.chunk_chars == (0, 3)


async def test_missing_done_after_finish_is_fine_without_finish_is_an_error() -> None:
    rec, _, error = await run(ROLE + TOKEN + FINISH)
    assert error is None and rec.traces[0].outcome == "ok"
    rec, _, error = await run(ROLE + TOKEN)
    assert isinstance(error, StreamProtocolError)
    assert rec.traces[0].outcome == "error"


async def test_in_band_error_event_is_a_server_error() -> None:
    frame = b'data: {"error":{"message":"engine died","type":"server_error"}}\n\n'
    rec, got, error = await run(ROLE + TOKEN + frame + b"data: [DONE]\n\n")
    assert isinstance(error, ServerError) and "engine died" in str(error)
    assert len(got) == 2 and rec.traces[0].outcome == "error"


async def test_empty_deltas_count_as_chunks_not_content() -> None:
    rec, _, error = await run(ROLE + EMPTY + TOKEN + EMPTY + TOKEN + FINISH + b"data: [DONE]\n\n")
    assert error is None
    (trace,) = rec.traces
    assert trace.chunk_chars == (0, 0, 3, 0, 3, 0)
    assert trace.ttfc is not None and trace.ttft is not None and trace.ttfc <= trace.ttft
    assert trace.first_chunk == trace.chunk_times[0]
    assert trace.first_content == trace.chunk_times[2]
    assert trace.usage.completion_tokens == 2 and trace.usage.estimated
    assert len(trace.itl) == 1


@pytest.mark.parametrize("status", [429, 503])
async def test_error_status_is_a_server_error(status: int) -> None:
    rec = Recorder()
    with respx.mock:
        respx.post(URL + "/chat/completions").mock(
            return_value=httpx.Response(status, json={"error": {"message": "busy"}})
        )
        async with StreamClient(URL, recorder=rec) as client:
            with pytest.raises(ServerError) as info:
                async with client.chat(model="m", messages=[]) as s:
                    async for _ in s:
                        pass
    assert info.value.status_code == status
    assert rec.traces[0].status_code == status


async def test_done_without_a_finish_reason_is_incomplete_too() -> None:
    rec, got, error = await run(ROLE + TOKEN + TOKEN + b"data: [DONE]\n\n")
    assert isinstance(error, IncompleteStreamError) and len(got) == 3
    (trace,) = rec.traces
    assert trace.outcome == "error" and trace.error_type == "IncompleteStream"
    assert trace.chunk_chars == (0, 3, 3)


@pytest.mark.parametrize(
    ("header", "low", "high"),
    [("7", 7.0, 7.0), ("0.5", 0.5, 0.5), ("in a while", None, None), ("http-date", 55.0, 61.0)],
)
async def test_retry_after_in_seconds_or_as_an_http_date(
    header: str, low: float | None, high: float | None
) -> None:
    """One parser for every path: StreamClient's errors and the dispatcher read it alike."""
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from fairstream._dispatch._failures import retry_after

    if header == "http-date":
        header = format_datetime(datetime.now(UTC) + timedelta(seconds=61), usegmt=True)
    with respx.mock:
        respx.post(URL + "/chat/completions").mock(
            return_value=httpx.Response(
                429, json={"error": {"message": "busy"}}, headers={"retry-after": header}
            )
        )
        async with StreamClient(URL, recorder=Recorder()) as client:
            with pytest.raises(ServerError) as info:
                async with client.chat(model="m", messages=[]) as s:
                    async for _ in s:
                        pass
    got = info.value.retry_after
    assert retry_after(info.value) == got
    if low is None:
        assert got is None
    else:
        assert got is not None and low <= got <= (high or low)
