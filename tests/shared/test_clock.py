"""Each process's estimate of Redis's clock: a heartbeat answered late (its process's loop
busy) must not move it, or samples from several processes stop lining up."""

from __future__ import annotations

import time
from typing import Any

from fairstream._dispatch.shared._slots import SharedSlots

from .conftest import RedisServer


async def test_a_late_heartbeat_does_not_move_the_clock_offset(
    redis_server: RedisServer,
) -> None:
    slots = SharedSlots(redis_server.url, "clock", limit=4)
    await slots.open()
    try:
        for _ in range(4):
            await slots.renew()
        before = slots.clock_offset
        call = slots._call

        async def read_late(name: str, args: list[Any]) -> Any:
            answer = await call(name, args)
            time.sleep(0.06)  # noqa: ASYNC251 (the loop was busy: the answer is read 60 ms late)
            return answer

        slots._call = read_late  # type: ignore[method-assign]
        await slots.renew()
        slots._call = call  # type: ignore[method-assign]
        late = slots._clock[-1]
        assert late[0] > 0.05  # that heartbeat's round trip took the stall
        assert abs(late[1] - before) > 0.02  # and its own reading is off by half of it
        assert abs(slots.clock_offset - before) < 0.005  # the quickest one still counts
    finally:
        await slots.aclose()
