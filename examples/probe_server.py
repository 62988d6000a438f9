"""Probe a server: a short designed set of requests tells how it batches.

    python examples/probe_server.py [http://HOST:PORT/v1 MODEL]

Without arguments it starts the embedded reference server in the seed's configuration
(static batches of 4, finished streams held until the batch ends). Against your own server
it sends at most 32 requests of at most 64 tokens. Same as `fairstream probe --base-url ...`.
"""

from __future__ import annotations

import asyncio
import sys

import fairstream
from fairstream import ReferenceServer, ServerConfig


async def run(base_url: str, model: str) -> None:
    recorder = fairstream.Recorder()
    report = await fairstream.probe(base_url, model, recorder=recorder)
    fairstream.print_report(report)
    print(fairstream.ascii_timeline(recorder.traces))
    print("as JSON:", report.to_dict()["verdict"], report.to_dict()["recommendation"])


async def main() -> None:
    if len(sys.argv) > 2:
        await run(sys.argv[1], sys.argv[2])
        return
    config = ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.25)
    async with ReferenceServer(config) as server:
        await run(server.base_url, config.model)


if __name__ == "__main__":
    asyncio.run(main())
