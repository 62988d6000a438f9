"""A benchmark's results file: what it printed and measured, with the code and machine it ran on.

Every benchmark writes ``benchmarks/results/<name>.json`` (``FAIRSTREAM_RESULTS_DIR`` sends
them elsewhere, as the smoke tests do): the fairstream version, the git commit and whether the
tree was dirty, the date, the machine (CPU model, cores, Python), the parameters it ran with,
its figures and the lines it printed. ``benchmarks/report.py`` renders the docs' tables from
these files, so a figure in the docs always names the code that produced it. History lives
in ``git log``: a new run replaces the file.

    if __name__ == "__main__":
        record.main("overhead", main)  # main() parses its options

A benchmark that renders into the docs puts its figures in ``record.current().figures``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from fairstream import __version__

__all__ = ["Results", "current", "git", "load", "machine", "main", "results", "results_dir"]

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = "fairstream.bench/1"


def results_dir() -> Path:
    """Where results files go: ``benchmarks/results``, or ``$FAIRSTREAM_RESULTS_DIR``."""
    return Path(os.environ.get("FAIRSTREAM_RESULTS_DIR") or ROOT / "benchmarks" / "results")


def git() -> dict[str, Any]:
    """The commit the code came from, and whether tracked files differ from it."""

    def run(*cmd: str) -> str:
        out = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = run("rev-parse", "HEAD")
    # the code: src and the benchmarks, not the results files a run rewrites
    paths = ("--", "src", "benchmarks", ":(exclude)benchmarks/results")
    dirty = bool(run("status", "--porcelain", "--untracked-files=no", *paths))
    return {"commit": commit or None, "dirty": dirty if commit else None}


def machine() -> dict[str, Any]:
    """CPU model, cores and Python: what a reader needs to compare two results files."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


class _Tee:
    """Writes to the real stdout and keeps each finished line."""

    def __init__(self, out: TextIO, lines: list[str]) -> None:
        self._out, self._lines, self._part = out, lines, ""

    def write(self, text: str) -> int:
        self._out.write(text)
        self._part += text
        *done, self._part = self._part.split("\n")
        self._lines += done
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def close_line(self) -> None:
        if self._part:
            self._lines.append(self._part)
            self._part = ""


@dataclass
class Results:
    """One benchmark run's record; ``figures`` is for what ``report.py`` renders."""

    name: str
    parameters: dict[str, Any]
    figures: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    # the code as the run starts: what ran, whatever is edited while it runs
    code: dict[str, Any] = field(default_factory=git)
    keep: bool = True  # False: a run that measured nothing (it showed an older file)

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "benchmark": self.name,
            "fairstream": __version__,
            "git": self.code,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            "parameters": self.parameters,
            "figures": self.figures,
            "lines": self.lines,
        }

    def save(self, path: Path | None = None) -> Path:
        path = path or results_dir() / f"{self.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_json(), indent=1, default=str) + "\n")
        return path


@contextmanager
def results(name: str, parameters: dict[str, Any], path: Path | None = None) -> Iterator[Results]:
    """Record what the block prints; write the file when it ends without an error."""
    res = Results(name, {k: v for k, v in parameters.items() if k != "out"})
    real = sys.stdout
    tee = _Tee(real, res.lines)
    sys.stdout = tee  # type: ignore[assignment]
    try:
        yield res
    finally:
        sys.stdout = real
        tee.close_line()
    if res.keep:
        written = res.save(path)
        print(f"results written to {written}", file=sys.stderr)


def load(name: str) -> dict[str, Any] | None:
    """A benchmark's committed results file, or None when it has none."""
    path = ROOT / "benchmarks" / "results" / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


_current: Results | None = None


def current() -> Results:
    """The run being recorded (figures go in its ``figures``); a throwaway one outside any."""
    return _current if _current is not None else Results("unrecorded", {})


def main(name: str, fn: Callable[[], object]) -> None:
    """Run a benchmark's ``main`` and write its results file.

    The parameters are the options its parser took, defaults included: the first
    ``parse_args`` during the run is recorded. Exits with ``fn``'s status (0 for None).
    """
    global _current
    parse = argparse.ArgumentParser.parse_args
    run = Results(name, {})

    def recording(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
        ns = parse(self, *a, **k)
        if not run.parameters:
            run.parameters = {key: v for key, v in vars(ns).items() if key != "out"}
        return ns

    argparse.ArgumentParser.parse_args = recording  # type: ignore[assignment,method-assign]
    _current = run
    try:
        with results(name, {}) as res:
            res.figures = run.figures
            status = fn()
            res.parameters, res.keep = run.parameters, run.keep
    finally:
        argparse.ArgumentParser.parse_args = parse  # type: ignore[method-assign]
        _current = None
    sys.exit(status if isinstance(status, int) else 0)
