"""The reference server three ways: in this process, in its own process, and in virtual time.

    python examples/reference_server.py

The same scheduling engine runs behind HTTP and in the simulator, so a test or a benchmark has
an exact oracle. Prints, for a static and a continuous server, when a short and a long request
sent together finish: over HTTP, and in virtual time.
"""

from __future__ import annotations

import asyncio

from fairstream import ReferenceServer, ServerConfig, StreamClient
from fairstream.sim import SimRequest, simulate

STATIC = ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.1)
CONTINUOUS = ServerConfig(mode="continuous", max_num_seqs=16, time_scale=0.1)


async def over_http(base_url: str, model: str) -> list[float]:
    """A short and a long request sent together: each one's E2E, seconds."""
    async with StreamClient(base_url) as client:
        traces = await asyncio.gather(
            *(
                client.complete(
                    model=model,
                    messages=[{"role": "user", "content": "hi"}],
                    max_tokens=n,
                    ignore_eos=True,
                )
                for n in (8, 128)
            )
        )
    return [t.e2e or 0.0 for t in traces]


async def main() -> None:
    # in this process, on the running event loop
    async with ReferenceServer(STATIC) as server:
        short, long = await over_http(server.base_url, STATIC.model)
        print(f"static, HTTP: short {short:.2f}s, long {long:.2f}s (held to the batch's end)")

    # in its own process (what benchmarks use, so the client's CPU does not slow the server)
    with ReferenceServer.in_subprocess(CONTINUOUS) as handle:
        short, long = await over_http(handle.base_url, CONTINUOUS.model)
        print(f"continuous, HTTP: short {short:.2f}s, long {long:.2f}s (each at its own end)")

    # the same engines in virtual time: exact, instant, model seconds
    for config in (STATIC, CONTINUOUS):
        run = simulate(config.build_engine(), [SimRequest(0.0, 16, n) for n in (8, 128)])
        ends = ", ".join(f"{r.e2e:.2f}s" for r in run.results)
        print(f"{config.mode}, virtual time (model seconds): {ends}")


if __name__ == "__main__":
    asyncio.run(main())
