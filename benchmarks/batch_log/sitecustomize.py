"""The reference server's static batches, as it formed them (``matrix_cell.py --batches``).

Imported at start-up by any Python process whose ``PYTHONPATH`` holds this folder; acts only
when ``FAIRSTREAM_BATCH_LOG`` names a file: each static batch the engine starts is appended
to it as a JSON line ``[engine time, member lengths, lengths left waiting]``. The client sees
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

    def _logged(self: Any, now: float, events: list[Any]) -> None:
        formed = not self._batch
        _start(self, now, events)
        if formed and self._batch:
            lengths = [m.req.output_tokens for m in self._batch]
            left = [m.req.output_tokens for m in self._waiting]
            _out.write(json.dumps([now, lengths, left]) + "\n")

    _static.StaticEngine._start_step = _logged  # type: ignore[method-assign]
