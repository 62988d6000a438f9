"""``server_matrix.py --resume FILE``: finished rows kept on disk, so a run too long for one
sitting (the default size takes hours) goes on where it stopped, at the same code and args.

The file is JSON lines: a header (the arguments that shape the figures and a hash of
``src/fairstream``, the demo's module left out), then one line per finished workload of a row
(its cells' raw per-seed figures; older files hold one line per row, read the
same way), so a row stopped midway keeps the workloads it finished. A file written by other
code or other arguments is refused, not mixed in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

__all__ = ["Resume", "calibrations", "code_hash"]

SRC = Path(__file__).resolve().parents[1] / "src" / "fairstream"
# what no matrix cell runs: ``fairstream demo`` (its own figures come from demo_rows.py), so a
# change there leaves the measured code, and its file, as is
NOT_MEASURED = frozenset({"_cli/_demo.py"})


def code_hash(root: Path = SRC) -> str:
    """A hash of every Python file under ``root`` (path and content) but ``NOT_MEASURED``:
    the code measured."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if (rel := path.relative_to(root)).as_posix() in NOT_MEASURED:
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def read_kept(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, Any]]]]:
    """What a resume file holds, whatever code made it: its header, and row -> workload -> cells."""
    lines = path.read_text().splitlines()
    if not lines:
        raise SystemExit(f"{path} is empty")
    done: dict[str, dict[str, dict[str, Any]]] = {}
    for line in lines[1:]:
        part = json.loads(line)
        done.setdefault(part["row"], {}).update(part["results"])
    return json.loads(lines[0]), done


def calibrations(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """row -> workload -> the llama.cpp step it was judged with (lines that carry it; a
    workload without one took the fixed 18 ms)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for line in path.read_text().splitlines()[1:]:
        part = json.loads(line)
        if part.get("calib"):
            for wl in part["results"]:
                out.setdefault(part["row"], {})[wl] = part["calib"]
    return out


def cells_of(
    done: dict[str, dict[str, dict[str, Any]]], row: str, cell_type: type
) -> dict[str, dict[str, Any]]:
    """``row``'s kept workloads as cells (workload -> policy -> ``cell_type``), maybe none."""
    return {
        wl: {p: cell_type(**c) for p, c in cells.items()} for wl, cells in done.get(row, {}).items()
    }


class Resume:
    """The rows a resumable run has finished, and where to add the next."""

    def __init__(self, path: Path, header: dict[str, Any], cell_type: type) -> None:
        self.path, self.cell_type = path, cell_type
        self.header = {**header, "code": code_hash()}
        self.done: dict[str, dict[str, dict[str, Any]]] = {}
        self.calibs: dict[str, dict[str, dict[str, float]]] = {}
        if path.exists() and path.stat().st_size:
            found, self.done = read_kept(path)
            self.calibs = calibrations(path)
            if found != self.header:
                changed = sorted(k for k in {**found, **self.header}
                                 if found.get(k) != self.header.get(k))  # fmt: skip
                raise SystemExit(
                    f"{path} was written by another run (differs in {', '.join(changed)}):"
                    " remove it or name another file (--show FILE prints what it holds)"
                )
        else:
            path.write_text(json.dumps(self.header) + "\n")

    def get(self, row: str) -> dict[str, dict[str, Any]]:
        """The workloads of ``row`` kept so far (workload -> policy -> cell), maybe none."""
        return cells_of(self.done, row, self.cell_type)

    def add(self, row: str, workload: str, cells: dict[str, Any], calib: Any = None) -> None:
        """Keep one finished workload of ``row`` (policy -> cell), and the measured step it
        was judged with (llama.cpp's rows; a dataclass)."""
        raw = {p: dataclasses.asdict(c) for p, c in cells.items()}
        line: dict[str, Any] = {"row": row, "results": {workload: raw}}
        if calib is not None:
            line["calib"] = dataclasses.asdict(calib)
            self.calibs.setdefault(row, {})[workload] = line["calib"]
        with self.path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        self.done.setdefault(row, {})[workload] = raw
