"""The reference server's static batches, as it formed them (``matrix_cell.py --batches``).

Imported at start-up by any Python process whose ``PYTHONPATH`` holds this folder; acts only
when ``FAIRSTREAM_BATCH_LOG`` names a file: each static batch the engine starts is appended
to it as a JSON line ``[engine time, member lengths, lengths left waiting, idle]``, idle the
engine seconds since the last batch ended (null for the first). The client sees
its streams' first tokens late and bunched; this is what the server did.
"""

from __future__ import annotations

import json
import os
from typing import Any

if os.environ.get("FAIRSTREAM_BATCH_LOG"):
    from fairstream.server import _static

    _out = open(os.environ["FAIRSTREAM_BATCH_LOG"], "a", buffering=1)  # noqa: SIM115
    _start = _static.StaticEngine._start_step
    _finish = _static.StaticEngine._finish_step
    _ended: dict[int, float] = {}  # engine -> when its last batch ended

    def _finished(self: Any, t: float, events: list[Any]) -> None:
        running = bool(self._batch)
        _finish(self, t, events)
        if running and not self._batch:
            _ended[id(self)] = t

    def _logged(self: Any, now: float, events: list[Any]) -> None:
        formed = not self._batch
        _start(self, now, events)
        if formed and self._batch:
            lengths = [m.req.output_tokens for m in self._batch]
            left = [m.req.output_tokens for m in self._waiting]
            idle = now - _ended[id(self)] if id(self) in _ended else None
            _out.write(json.dumps([now, lengths, left, idle]) + "\n")

    _static.StaticEngine._start_step = _logged  # type: ignore[method-assign]
    _static.StaticEngine._finish_step = _finished  # type: ignore[method-assign]
