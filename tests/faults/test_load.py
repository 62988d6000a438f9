"""Load at test size: many concurrent streams through the dispatcher, nothing lost.

The full size (1000 streams) is ``benchmarks/load.py``; here the same script runs with 200
against the server in its own process.
"""

from __future__ import annotations

from .._bench import run_benchmark


def test_200_streams_through_the_dispatcher_lose_nothing() -> None:
    lines = run_benchmark("load.py", "--streams", "200", "--tokens", "24")
    figures = {ln[:24].strip(): ln[24:].strip() for ln in lines if len(ln) > 24}
    assert figures["streams"] == "200"
    assert figures["traces kept"] == "200"
    assert figures["unexpected errors"] == "0"
    client_mb = float(figures["peak RSS"].split("client ")[1].split(" MB")[0])
    server_mb = float(figures["peak RSS"].split("server ")[1].split(" MB")[0])
    assert client_mb < 1024 and server_mb < 1024  # bounded: no per-chunk growth
