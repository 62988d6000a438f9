"""llama.cpp's ``llama-server`` as a test target (marker ``real``).

The server is built by ``python benchmarks/llama_server.py build`` (cached under
``~/.cache/fairstream/llama.cpp/``). Without the binary these tests are skipped with that
instruction, except where ``FAIRSTREAM_REQUIRE_REAL=1`` (CI): there a missing binary fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import llama_server

REQUIRED = os.environ.get("FAIRSTREAM_REQUIRE_REAL") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)
            item.add_marker(pytest.mark.timeout(300))


@pytest.fixture(scope="session")
def llama() -> Iterator[Callable[[int], llama_server.LlamaServer]]:
    """``llama(slots)``: a running llama-server with that many slots (one per count)."""
    if not llama_server.binary_path().exists():
        why = (
            f"llama-server is not built ({llama_server.binary_path()}): run "
            "`python benchmarks/llama_server.py build` (needs cmake and g++, ~7 min on 2 cores)"
        )
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    servers: dict[int, llama_server.LlamaServer] = {}

    def get(slots: int) -> llama_server.LlamaServer:
        if slots not in servers:
            for other in list(servers):  # one engine at a time: they share 2 cores
                servers.pop(other).stop()
            servers[slots] = llama_server.LlamaServer(slots=slots)
            servers[slots].start()
        return servers[slots]

    try:
        yield get
    finally:
        for server in servers.values():
            server.stop()
