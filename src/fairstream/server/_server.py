"""``ReferenceServer``: the engine, its real-time driver and the HTTP front, in one object.

Run it in the current event loop (``async with``), in a background thread, or in a
subprocess (benchmarks want the server off the client's loop and core).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Literal

from .._errors import LifecycleError
from ._api import OpenAIApp
from ._config import ServerConfig
from ._driver import Driver
from ._http import HttpLimits, HttpProtocol

__all__ = ["ReferenceServer", "ServerHandle"]


class ReferenceServer:
    """An OpenAI-compatible streaming server whose batching you choose.

    ``async with ReferenceServer(ServerConfig(mode="static")) as server:`` serves on
    ``server.base_url`` (``http://127.0.0.1:PORT/v1``) inside the running loop.
    """

    def __init__(
        self,
        config: ServerConfig | None = None,
        *,
        record_emissions: bool = False,
        **overrides: Any,
    ) -> None:
        base = config or ServerConfig()
        self.record_emissions = record_emissions
        self.config = base.with_(**overrides) if overrides else base
        self.driver: Driver | None = None
        self.app: OpenAIApp | None = None
        self._server: asyncio.Server | None = None
        self._conns: set[HttpProtocol] = set()
        self.port: int | None = None
        self._state: Literal["unopened", "open", "closed"] = "unopened"

    @property
    def state(self) -> str:
        """``unopened`` until started, ``open`` while serving, ``closed`` after."""
        return self._state

    @property
    def base_url(self) -> str:
        """``http://host:port/v1``, the value for an OpenAI client's ``base_url``."""
        if self._state != "open" or self.port is None:
            raise LifecycleError(f"the ReferenceServer is {self._state}: it has no base_url")
        host = self.config.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/v1"

    @property
    def emissions(self) -> dict[str, list[float]]:
        """Response id -> perf_counter() of each content chunk written (record_emissions)."""
        if self.app is None or self.app.emissions is None:
            raise RuntimeError("start the server with record_emissions=True")
        return self.app.emissions

    @property
    def connections(self) -> int:
        """Open client connections, idle keep-alive ones included."""
        return len(self._conns)

    @property
    def busy_connections(self) -> int:
        """Connections with a request in flight (a response not yet finished)."""
        return sum(1 for c in self._conns if c.exchange is not None)

    async def start(self) -> None:
        cfg = self.config
        if self._state != "unopened":
            raise LifecycleError(
                f"the ReferenceServer is {self._state}: a server starts once (make a new one)"
            )
        self._state = "open"
        self.driver = Driver(cfg.build_engine(), cfg.time_scale)
        self.app = OpenAIApp(cfg, self.driver)
        if self.record_emissions or cfg.record_emissions:
            self.app.emissions = {}
        limits = HttpLimits(
            cfg.max_header_bytes,
            cfg.max_body_bytes,
            cfg.idle_timeout_s,
            cfg.write_buffer_limit,
            cfg.max_connections,
        )
        app, conns = self.app, self._conns

        def factory() -> asyncio.Protocol:
            return HttpProtocol(app, limits, conns)

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(factory, cfg.host, cfg.port, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        self.driver.start()

    async def aclose(self) -> None:
        """Stop serving: open streams are dropped. Closing twice is harmless."""
        if self._state == "open":
            self._state = "closed"
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for proto in list(self._conns):
            proto.close()
        if self.driver is not None:
            await self.driver.stop()
        if server is not None:
            await server.wait_closed()

    async def serve_forever(self) -> None:
        """Start (if needed) and serve until cancelled."""
        if self._state == "unopened":
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.aclose()

    async def __aenter__(self) -> ReferenceServer:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- off-loop runners -------------------------------------------------------------------
    @classmethod
    @contextlib.contextmanager
    def in_thread(
        cls, config: ServerConfig | None = None, *, record_emissions: bool = False, **overrides: Any
    ) -> Iterator[ServerHandle]:
        """Run the server on its own event loop in a daemon thread (``handle.server`` is it)."""
        server = cls(config, record_emissions=record_emissions, **overrides)
        ready = threading.Event()
        loop = asyncio.new_event_loop()
        failure: list[BaseException] = []

        async def main() -> None:
            try:
                await server.start()
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            await server.serve_forever()

        task_holder: list[asyncio.Task[None]] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            task_holder.append(loop.create_task(main()))
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(task_holder[0])
            loop.close()

        thread = threading.Thread(target=run, name="fairstream-server", daemon=True)
        thread.start()
        ready.wait()
        if failure:
            thread.join()
            raise failure[0]
        try:
            yield ServerHandle(server.base_url, server.config, server=server)
        finally:
            loop.call_soon_threadsafe(task_holder[0].cancel)
            thread.join(timeout=10)

    @classmethod
    @contextlib.contextmanager
    def in_subprocess(
        cls, config: ServerConfig | None = None, **overrides: Any
    ) -> Iterator[ServerHandle]:
        """Run ``fairstream serve`` in a child process; yields once it is listening."""
        cfg = (config or ServerConfig()).with_(**overrides)
        argv = [sys.executable, "-m", "fairstream", "serve", *cfg.to_args()]
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith("listening on "):
                raise RuntimeError(f"server did not start: {line!r} (exit {proc.poll()})")
            yield ServerHandle(line.split()[-1], cfg, pid=proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


class ServerHandle:
    """Where an off-loop server listens."""

    def __init__(
        self,
        base_url: str,
        config: ServerConfig,
        pid: int | None = None,
        server: ReferenceServer | None = None,
    ) -> None:
        self.base_url = base_url
        self.config = config
        self.pid = pid
        self.server = server  # the in-process server object (threads only)

    def __repr__(self) -> str:
        return f"ServerHandle({self.base_url!r}, pid={self.pid})"
