"""The results file: a header that says where the figures came from, then a line per cell.

JSON lines. The header records the fairstream version, the git commit and a dirty flag, a
hash of the code that runs (``src/fairstream`` and this package), the date, the machine, the
pinning, Python, the time scale, the size and seeds, and the cells planned. Each finished cell
adds a line with every arm's figures per seed and its duration, so a run stopped midway
resumes where it stopped: the same command skips the cells the file holds. A file from other
code or other options is refused, not mixed in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fairstream import __version__

from .. import record

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "fairstream.matrix/1"
# what must match for a file to resume: the code and every option that shapes the figures
SHAPE = ("schema", "code", "size", "seeds", "time_scale", "pinning", "cells")


def code_hash() -> str:
    """A hash of the code the figures depend on: the package and the matrix."""
    h = hashlib.sha256()
    for base in (ROOT / "src" / "fairstream", ROOT / "benchmarks" / "matrix"):
        for path in sorted(base.rglob("*.py")):
            h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def header(
    size: str, seeds: int, scale: float, pinning: str, cells: list[str], llama: str
) -> dict[str, Any]:
    m = record.machine()
    return {
        "schema": SCHEMA,
        "fairstream": __version__,
        "git": record.git(),
        "code": code_hash(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu": m["cpu"], "cores": m["cores"], "system": m["system"]},
        "python": m["python"],
        "pinning": pinning,
        "time_scale": scale,
        "size": size,
        "seeds": seeds,
        "cells": cells,
        "llama": llama,
    }


@dataclass
class Results:
    """A results file's header and the cells it holds, by name."""

    header: dict[str, Any]
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.cells.values())


def read(path: Path) -> Results:
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    if not lines or lines[0].get("schema") != SCHEMA:
        raise SystemExit(f"{path} is not a matrix results file ({SCHEMA})")
    return Results(lines[0], {c["cell"]: c for c in lines[1:]})


class Writer:
    """Appends finished cells to a results file; resumes one of the same shape."""

    def __init__(self, path: Path, head: dict[str, Any]) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        if path.exists() and path.stat().st_size:
            kept = read(path)
            differ = [k for k in SHAPE if kept.header.get(k) != head.get(k)]
            if differ:
                raise SystemExit(
                    f"{path} was made by other code or options ({', '.join(differ)} differ):"
                    " pass another -o FILE, or delete it to start again"
                )
            self.done = kept.cells
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(head) + "\n")

    def add(self, cell: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(cell) + "\n")
        self.done[cell["cell"]] = cell
