"""Server and client on cores of their own, so neither takes the other's cycles."""

from __future__ import annotations

import contextlib
import os

__all__ = ["Pinning", "pinning"]


class Pinning:
    """Which core the server gets and which the client keeps (None: not pinned)."""

    def __init__(self, server: int | None, client: int | None) -> None:
        self.server, self.client = server, client

    def describe(self) -> str:
        if self.server is None:
            return "not pinned"
        return f"server on core {self.server}, client on core {self.client}"

    def client_now(self) -> None:
        """Pin this process (the client) to its core."""
        if self.client is not None:
            os.sched_setaffinity(0, {self.client})

    def server_process(self, pid: int) -> None:
        """Pin a server process, with every thread it has started, to the server's core."""
        if self.server is None:
            return
        tasks = f"/proc/{pid}/task"
        for tid in os.listdir(tasks) if os.path.isdir(tasks) else [str(pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(int(tid), {self.server})


def pinning(enabled: bool) -> Pinning:
    """The first two usable cores, server first; unpinned when asked, or with fewer cores."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not enabled or len(cores) < 2:
        return Pinning(None, None)
    return Pinning(cores[0], cores[1])
