"""The plain-httpx path is anyio code, so it runs under trio too (server: asyncio, in a thread)."""

from __future__ import annotations

import trio

from fairstream import Recorder, ReferenceServer, StreamClient, StreamTrace
from tests.conftest import FAST

MSG = [{"role": "user", "content": "hi"}]


def test_stream_client_completes_and_cancels_under_trio() -> None:
    rec = Recorder()
    with ReferenceServer.in_thread(FAST) as handle:

        async def main() -> StreamTrace:
            async with StreamClient(handle.base_url, recorder=rec) as client:
                trace = await client.complete(
                    model="fairstream-ref", messages=MSG, max_tokens=5, ignore_eos=True
                )
                got = 0
                with trio.move_on_after(60) as outer:
                    with trio.CancelScope() as scope:
                        async with client.chat(
                            model="fairstream-ref", messages=MSG, max_tokens=4000, ignore_eos=True
                        ) as stream:
                            async for chunk in stream:
                                if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                                    got += 1
                                    if got == 3:
                                        scope.cancel()  # the consumer is cancelled mid-stream
                assert not outer.cancelled_caught
                return trace

        first = trio.run(main)
    assert first.outcome == "ok" and first.usage.completion_tokens == 5
    second = rec.traces[1]
    assert second.outcome == "cancelled"
    assert sum(1 for c in second.chunk_chars if c) >= 3
