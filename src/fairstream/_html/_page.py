"""One self-contained HTML page from a report: the verdict, its evidence, what to change and
what it would gain, the timeline, the distributions and, for ``bench``, the percentile tables.

Rendered by Jinja2 with autoescaping on (extra ``report``): every string that comes from the
user (labels, model names, log text) reaches the page as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import require
from .._version import __version__
from ._charts import cdf, timeline
from ._i18n import Lang, guess_lang, words
from ._verdict import evidence_meaning, headline, recommendation, waited_line

if TYPE_CHECKING:
    from .._detect import BatchingReport
    from .._errors import ReplayRefused
    from .._replay import Replay
    from .._trace import StreamTrace

__all__ = ["render_html", "write_html"]

Arms = Sequence[tuple[str, Mapping[str, Any]]]


def render_html(
    report: BatchingReport | Replay,
    *,
    traces: Sequence[StreamTrace] = (),
    replay: Replay | ReplayRefused | None = None,
    arms: Arms = (),
    lang: Lang | None = None,
    title: str | None = None,
    resolution: float = 0.0,
) -> str:
    """The page as a string. ``report`` is the detector's report, or a replay (its fitted
    report, and its gain); ``arms`` are ``fairstream.bench/1`` results by name; ``lang``
    follows the input when None (Chinese labels or log text give a Chinese page)."""
    try:
        import jinja2
    except ImportError:
        require("jinja2", "report")
    from .._replay import Replay

    if isinstance(report, Replay):
        replay, report = report, report.fit.report
    if lang is None:
        lang = guess_lang([*(t.label for t in traces), *(t.error_message for t in traces)])
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
    w = words(lang)
    tl = timeline(traces, resolution)
    code, alt, why = recommendation(report, lang)
    gain, note, refusal = _gain(replay, lang)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fairstream._html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    page = env.get_template("report.html.j2")
    ok = [t for t in traces if t.outcome == "ok"]
    return page.render(
        lang=lang,
        w=w,
        title=title or w["title"],
        version=__version__,
        count=len(traces),
        headline=headline(report, lang),
        waited=waited_line(report, tl.together, len(tl.rows), tl.waited, lang),
        alarming=report.synchronized_completion or report.release == "batch_end",
        evidence=[
            {
                "signal": e.signal,
                "value": _value(e.value),
                "meaning": evidence_meaning(e.signal, e.detail, lang),
            }
            for e in report.evidence
        ],
        rec_code=code,
        rec_alt=alt,
        rec_why=why,
        gain=gain,
        gain_note=note,
        refusal=refusal,
        tl=tl,
        num=_num,
        cdfs=[
            cdf(w["ttft"], [t.ttft for t in ok if t.ttft is not None]),
            cdf(w["e2e"], [t.e2e for t in ok if t.e2e is not None]),
            cdf(w["tps"], [v for t in ok if (v := t.tokens_per_second) is not None]),
        ],
        bench=_bench(arms, w) if arms else None,
        tip_words={k: w[k] for k in ("queue", "ttft", "e2e", "held", "tokens", "tps")}
        | {"held": w["held_s"], "tps": w["tps"]},
    )


def write_html(
    report: BatchingReport | Replay,
    path: str | Path,
    *,
    traces: Sequence[StreamTrace] = (),
    replay: Replay | ReplayRefused | None = None,
    arms: Arms = (),
    lang: Lang | None = None,
    title: str | None = None,
    resolution: float = 0.0,
) -> Path:
    """Write the page (see :func:`render_html`) to ``path``; returns the path."""
    html = render_html(
        report,
        traces=traces,
        replay=replay,
        arms=arms,
        lang=lang,
        title=title,
        resolution=resolution,
    )
    out = Path(path)
    out.write_text(html, encoding="utf-8")
    return out


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def _value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def _gain(
    replay: Replay | ReplayRefused | None, lang: Lang
) -> tuple[str | None, str | None, list[str] | None]:
    """The replay's expected gain with its interval, or the refusal's reasons."""
    from .._errors import ReplayRefused

    if replay is None:
        return None, None, None
    if isinstance(replay, ReplayRefused):
        reasons = list(replay.reasons)
        if replay.suggestion:
            reasons.append(replay.suggestion)
        return None, None, reasons
    b, a = replay.before, replay.after
    span = a.makespan / b.makespan if b.makespan else 1.0
    short = a.short_p50 / b.short_p50 if b.short_p50 else 1.0
    s_lo, s_hi = replay.intervals.get("makespan_ratio", (span, span))
    q_lo, q_hi = replay.intervals.get("short_p50_ratio", (short, short))
    if lang == "zh":
        gain = (
            f"通过 {replay.policy}：总耗时约为原来的 {span:.2f} 倍（{s_lo:.2f}–{s_hi:.2f}），"
            f"短请求的 p50 约为原来的 {short:.2f} 倍（{q_lo:.2f}–{q_hi:.2f}）。"
        )
        note = "基于拟合这些请求的服务端模型重放估计；区间反映模型与数据的不确定性。"
    else:
        gain = (
            f"Through {replay.policy}: makespan {span:.2f}x ({s_lo:.2f}-{s_hi:.2f}x), short"
            f" requests' p50 {short:.2f}x ({q_lo:.2f}-{q_hi:.2f}x) of what was observed."
        )
        note = (
            "Estimated by replaying these requests on a server model fitted to them; the range"
            " is the model's and the data's uncertainty."
        )
    if not replay.check.ok:
        note += " " + "; ".join(replay.check.reasons())
    return gain, note, None


_METRICS = ("ttft", "tpot", "itl", "e2e", "queue_time", "submit_e2e")
_SHORT = {
    "ttft": "ttft_short",
    "tpot": "tpot_short",
    "itl": "itl_short",
    "e2e": "e2e_short",
    "queue_time": "queue_short",
    "submit_e2e": "submit_short",
}


def _bench(arms: Arms, w: dict[str, str]) -> dict[str, Any]:
    """Each arm's percentile table, and the arms side by side (the first is the baseline)."""
    out = []
    for name, res in arms:
        metrics = []
        for m in _METRICS:
            p = res.get(m)
            if not p:
                continue
            cells = [f"{p[k]:.4g}" for k in ("mean", "p50", "p90", "p99")] + [str(p["n"])]
            metrics.append({"name": w[_SHORT[m]], "cells": cells})
        out.append({"name": name, "metrics": metrics})
    compare = []
    rows: list[tuple[str, Any]] = [
        (w["throughput"], lambda r: r.get("output_tokens_per_second")),
        (w["makespan"], lambda r: r.get("makespan")),
        (w["ok"], lambda r: r.get("ok")),
        (w["errors"], lambda r: r.get("errors")),
    ]
    for m in ("ttft", "e2e", "submit_e2e"):
        for q in ("p50", "p99"):
            rows.append((f"{w[_SHORT[m]]} {q}", lambda r, m=m, q=q: (r.get(m) or {}).get(q)))
    for label, get in rows:
        values = [get(res) for _, res in arms]
        base = values[0]
        cells = []
        for i, v in enumerate(values):
            if v is None:
                cells.append("-")
            elif i and isinstance(base, float | int) and base and isinstance(v, float):
                cells.append(f"{v:.4g} ({v / base:.2f}x)")
            else:
                cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        compare.append({"name": label, "cells": cells})
    return {"arms": out, "compare": compare}
