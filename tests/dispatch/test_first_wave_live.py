"""``auto``'s first wave over real HTTP: cold, a band of short requests smaller than slow start's
offer goes alone, so no long request reaches a static server's first batch.

Sent with the 6 short requests, 2 long ones took a place in the first batch of 4 in about one
burst of four (the order in which 8 simultaneous sends reach the server is the network's), and
held 3 short answers there for a long one's whole run.
"""

from __future__ import annotations

import anyio

from fairstream import Auto, Dispatcher, Recorder, StreamClient
from tests.conftest import ServerFactory

MSG = [{"role": "user", "content": "hi"}]
LENGTHS = [8, 64] * 6


async def test_no_long_request_holds_a_short_one_in_a_static_servers_first_batch(
    serve: ServerFactory,
) -> None:
    async with serve(mode="static", batch_size=4, release="batch_end", time_scale=0.25) as server:
        for _ in range(4):  # fresh client and policy each time: a cold first burst
            rec = Recorder()
            async with StreamClient(server.base_url, recorder=rec) as client:

                async def one(n: int) -> None:
                    await d.submit(
                        lambda: client.complete(
                            model=server.config.model, messages=MSG, max_tokens=n, ignore_eos=True
                        ),
                        expected_tokens=n,
                    )

                async with Dispatcher(Auto()) as d, anyio.create_task_group() as tg:
                    for n in LENGTHS:
                        tg.start_soon(one, n)
            short = [t.end or 0.0 for t in rec.traces if t.output_tokens == 8]
            long = [t.end or 0.0 for t in rec.traces if t.output_tokens == 64]
            assert len(short) == len(long) == 6
            assert max(short) < min(long), (sorted(short), sorted(long))
