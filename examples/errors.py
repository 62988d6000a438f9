"""Failures reach you as clear exceptions and still leave a trace: a fault matrix in small.

    python examples/errors.py

Starts the reference server with injected faults (a 429 with ``Retry-After``, a stream cut
before its finish chunk, a connection dropped mid-stream, a bad JSON frame) and streams one
request into each through ``fairstream.StreamClient``. Prints the exception each raised and
the outcome its trace recorded.
"""

from __future__ import annotations

import asyncio

import fairstream
from fairstream import Recorder, ReferenceServer, ServerConfig, StreamClient

FAULTS = ["status_429", "cut_close", "disconnect_mid", "bad_json"]


async def one(fault: str) -> None:
    config = ServerConfig(time_scale=0.1, faults=f"{fault}:rate=1,after=2")
    recorder = Recorder()
    async with (
        ReferenceServer(config) as server,
        StreamClient(server.base_url, recorder=recorder) as client,
    ):
        try:
            await client.complete(
                model=config.model, messages=[{"role": "user", "content": "hi"}], max_tokens=16
            )
        except fairstream.ServerError as exc:  # an error status or an in-band error event
            print(f"{fault}: ServerError {exc.status_code}, retry after {exc.retry_after} s")
        except fairstream.IncompleteStreamError as exc:  # ended without a finish_reason
            print(f"{fault}: IncompleteStreamError after {len(exc.trace.chunk_times)} chunks")
        except fairstream.StreamProtocolError as exc:  # not a valid OpenAI stream
            print(f"{fault}: StreamProtocolError: {exc}")
        except fairstream.TransportError as exc:  # the connection failed
            print(f"{fault}: TransportError: {type(exc.__cause__).__name__}")
    [trace] = recorder.traces
    print(f"  trace: outcome {trace.outcome}, error_type {trace.error_type}")


async def main() -> None:
    for fault in FAULTS:
        await one(fault)


if __name__ == "__main__":
    asyncio.run(main())
