"""Summary lines back into partial traces: fairstream's ``en``/``zh`` log lines, or a table.

A log line gives its end time (to the logging timestamp's resolution), E2E, TTFT and token
counts, which is enough for the synchronized-completion and sequential signals. A table of
``id ttft total [post-first]`` rows (the seed's four-row table) gives TTFT and total only;
its requests are taken as sent together. Lines that are neither are skipped and counted.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .._recorder import parse_jsonl
from .._trace import Outcome, StreamTrace, Usage

__all__ = ["TraceFile", "parse_summaries", "read_traces"]

_TS = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:[,.](\d{1,6}))?")
_NUM = r"(\d+(?:\.\d+)?|-)"
_INT = r"(\d+|-)"
_ZH = re.compile(
    r"(?:^|\s)(?P<name>[^\s|]*?)(?P<verdict>成功响应|响应失败|已取消)，用时 " + _NUM + r"秒"
    r" \| 首字延迟: " + _NUM + r"秒"
    r"(?: \| 输入tokens: " + _INT + r")? \| 输出tokens: (~?)" + _INT
)
_EN = re.compile(
    r"(?:^|\s)(?P<label>\S+) (?P<id>\S+) (?P<outcome>ok|error|cancelled) in " + _NUM + r"s"
    r" \| TTFT " + _NUM + r"s \| in " + _INT + r" \| out (~?)" + _INT
)
_UNIT = r"\s*(?:秒|s)?\s*"
_SEP = r"\s*[|,;\t ]\s*"
_ROW = re.compile(
    r"^\s*\|?\s*(?P<id>[\w.:-]+)"
    + _SEP
    + r"(?P<ttft>\d+(?:\.\d+)?)"
    + _UNIT
    + _SEP
    + r"(?P<total>\d+(?:\.\d+)?)"
    + _UNIT
    + r"(?:"
    + _SEP
    + r"(?P<post>\d+(?:\.\d+)?)"
    + _UNIT
    + r")?\|?\s*$"
)
# the zh line glues label and id ("LLM图像分析455"): the id is the trailing digits
_ID_TAIL = re.compile(r"^(?P<label>.*?)(?P<id>\d*)$")


@dataclass(frozen=True, slots=True)
class TraceFile:
    """Traces read from a file, how coarse their times are, and what could not be read."""

    traces: list[StreamTrace]
    kind: Literal["jsonl", "log", "table", "empty"]
    resolution: float = 0.0
    skipped: int = 0
    skipped_examples: list[str] = field(default_factory=list)
    torn: int = 0  # a JSONL file's last line cut short (its writer died mid-line)


def read_traces(path: str | Path) -> TraceFile:
    """A JSONL trace file (``fairstream.trace/1``) or a log/table file, format detected."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if first.startswith("{"):
        read = parse_jsonl(text)
        examples = [why for _, why in read.bad[:3]]
        return TraceFile(read.traces, "jsonl", 0.0, len(read.bad), examples, read.torn)
    return parse_summaries(lines)


@dataclass(slots=True)
class _Line:
    rid: str
    label: str | None
    outcome: Outcome
    e2e: float | None
    ttft: float | None
    prompt: int | None
    out: int | None
    estimated: bool
    stamp: float | None  # unix seconds of the line
    digits: int  # fractional digits of the stamp


def parse_summaries(lines: Iterable[str]) -> TraceFile:
    """Partial traces from summary log lines, or failing those, from table rows."""
    parsed: list[_Line] = []
    rows: list[tuple[str, float, float]] = []
    skipped, examples = 0, list[str]()
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        item = _parse_line(line)
        if item is not None:
            parsed.append(item)
            continue
        row = _parse_row(line)
        if row is not None:
            rows.append(row)
            continue
        skipped += 1
        if len(examples) < 3:
            examples.append(line[:80])
    if parsed:
        return _from_lines(parsed, skipped + len(rows), examples)
    if rows:
        traces = [
            StreamTrace(request_id=rid, sent=0.0, first_content=ttft, end=total, client="table")
            for rid, ttft, total in rows
        ]
        return TraceFile(traces, "table", 0.01, skipped, examples)
    return TraceFile([], "empty", 0.0, skipped, examples)


def _parse_line(line: str) -> _Line | None:
    m = _ZH.search(line)
    if m:
        name, verdict, e2e, ttft, prompt, est, out = m.groups()
        split = _ID_TAIL.match(name)
        assert split is not None
        label, rid = split.group("label") or None, split.group("id") or name
        outcome: Outcome = {"成功响应": "ok", "已取消": "cancelled"}.get(verdict, "error")  # type: ignore[assignment]
    else:
        m = _EN.search(line)
        if not m:
            return None
        label, rid, outcome_s, e2e, ttft, prompt, est, out = m.groups()
        outcome = outcome_s  # type: ignore[assignment]
    stamp, digits = _stamp(line[: m.start() + 1])
    return _Line(
        rid, label, outcome, _f(e2e), _f(ttft), _i(prompt), _i(out), est == "~", stamp, digits
    )


def _parse_row(line: str) -> tuple[str, float, float] | None:
    m = _ROW.match(line)
    if not m:
        return None
    ttft, total = float(m.group("ttft")), float(m.group("total"))
    post = m.group("post")
    if total < ttft or (post is not None and abs(ttft + float(post) - total) > 0.05 * total):
        return None  # not a (ttft, total, post-first) row
    return m.group("id"), ttft, total


def _from_lines(parsed: list[_Line], skipped: int, examples: list[str]) -> TraceFile:
    stamped = [p for p in parsed if p.stamp is not None and p.e2e is not None]
    if not stamped:  # no timestamps: like a table, taken as sent together
        origin, resolution = 0.0, 0.01
    else:
        origin = min((p.stamp or 0.0) - (p.e2e or 0.0) for p in stamped)
        resolution = max(10.0**-p.digits for p in stamped)
    traces = []
    for p in parsed:
        if p.stamp is not None and p.e2e is not None:
            end: float | None = p.stamp - origin
            sent = p.stamp - origin - p.e2e
        else:
            sent, end = 0.0, p.e2e
        first = None if p.ttft is None or sent is None else sent + p.ttft
        total = None if p.prompt is None or p.out is None else p.prompt + p.out
        traces.append(
            StreamTrace(
                request_id=p.rid,
                label=p.label,
                sent=sent,
                first_content=first,
                end=end,
                usage=Usage(p.prompt, p.out, total, p.estimated),
                outcome=p.outcome,
                client="log",
                wall_anchor=origin,
            )
        )
    return TraceFile(traces, "log", resolution, skipped, examples)


def _stamp(prefix: str) -> tuple[float | None, int]:
    m = _TS.search(prefix)
    if not m:
        return None, 0
    day, clock, frac = m.groups()
    try:
        base = calendar.timegm(time.strptime(f"{day} {clock}", "%Y-%m-%d %H:%M:%S"))
    except ValueError:
        return None, 0
    if frac:
        return base + int(frac) / 10 ** len(frac), len(frac)
    return float(base), 0


def _f(text: str | None) -> float | None:
    return None if text is None or text == "-" else float(text)


def _i(text: str | None) -> int | None:
    return None if text is None or text == "-" else int(text)
