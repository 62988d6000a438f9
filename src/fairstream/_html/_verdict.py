"""The verdict and its evidence in plain words, in English or Chinese, from the report's fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._i18n import Lang

if TYPE_CHECKING:
    from .._detect import BatchingReport

__all__ = ["evidence_meaning", "headline", "recommendation", "waited_line"]

_ZH_EVIDENCE = {
    "requests": "用于判断的已完成请求数",
    "dropped": "无法使用的请求数（失败、取消或缺少时间）",
    "skipped_lines": "无法读取的输入行数",
    "summary_input": "只有汇总时间（没有逐块时间）：看不到挂起、步长和停顿，置信度最多 0.6；"
    "`fairstream probe` 可以区分静态批处理和预填充停顿",
    "overlap": "同时生成的请求最多有多少个",
    "mid_decode_admissions": "在更早的请求仍在生成时拿到首字的请求数（静态批次不会中途补入）",
    "held_back": "有空闲槽位却仍在等待的请求数",
    "synchronized_completion": "本应各自结束的请求却一起结束",
    "started_and_ended_together": "长度不同却同时开始、同时结束的请求数",
    "post_first_slope": "首字后用时对首字延迟的斜率：大家一起结束时约为 -1，各自结束时约为 0",
    "held": "内容结束后流仍被挂起的请求数",
    "step_ms": "解码一步的时间（毫秒）",
    "prefill_stalls": "新请求预填充时，正在解码的请求是否暂停",
    "batch_waves": "按批次依次开始的请求波数",
    "batch_cap": "一个批次最多容纳的请求数",
    "capacity": "服务端同时处理的请求数",
    "waits_behind_one": "排在单个请求之后等待的请求数",
    "probe": "探测请求的结果",
    "undecided": "判断未定的原因",
    "unknown": "证据不足的原因",
}


def headline(report: BatchingReport, lang: Lang) -> str:
    """One sentence: how the server schedules, with its numbers and confidence."""
    if lang == "en":
        return report.summary
    if report.verdict == "unknown":
        return "证据不足，无法判断服务端如何批处理。"
    text = {
        "static": "服务端采用静态批处理（static batching）",
        "continuous": "服务端采用连续批处理（continuous batching）",
        "sequential": "服务端一次只处理一个请求",
    }[report.verdict]
    if report.batch_size and report.verdict == "static":
        text += f"，每批约 {report.batch_size} 个请求"
    if report.step_ms:
        text += f"，每步解码约 {report.step_ms:.3g} 毫秒"
    if report.release == "batch_end":
        text += "，已完成的流要等整批结束才关闭"
    if report.prefill_stalls:
        text += "，新请求预填充（prefill）时会暂停正在进行的解码"
    short = report.short_request_hostage
    if short is not None and short > 0:
        text += f"；短请求平均被拖延 {short:.3g} 秒"
    return text + f"（置信度 {report.confidence:.2f}）。"


def waited_line(
    report: BatchingReport, together: int, total: int, outstayed: float, lang: Lang
) -> str | None:
    """What the user sees: how many requests ended together, and the longest wait for others
    (the detector's hostage time, or failing chunk times, what a request outstayed its pace)."""
    hostage = max((f.hostage for f in report.findings), default=0.0)
    waited = max(hostage, outstayed)
    if together < 2 and waited <= 0:
        return None
    if lang == "zh":
        parts = []
        if together >= 2:
            parts.append(f"{total} 个请求中有 {together} 个几乎同时结束")
        if waited > 0:
            parts.append(f"快的请求在等慢的请求，最多多等了 {waited:.3g} 秒")
        return "，".join(parts) + "。"
    parts = []
    if together >= 2:
        parts.append(f"{together} of {total} requests finished together")
    if hostage >= outstayed and hostage > 0:
        parts.append(f"short requests waited up to {waited:.3g} s for long ones")
    elif waited > 0:
        parts.append(f"a request waited up to {waited:.3g} s for the others to finish")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def evidence_meaning(signal: str, detail: str, lang: Lang) -> str:
    """What a signal means, in the page's language (the detector's own sentence in English)."""
    if lang == "zh":
        return _ZH_EVIDENCE.get(signal, detail)
    return detail


def recommendation(report: BatchingReport, lang: Lang) -> tuple[str, str | None, str]:
    """The dispatcher setting to use (code), the detector's fixed alternative (code or None),
    and why, in plain words. `“auto”` first: it harms no server kind and adapts if the server
    changes; the fixed setting is what the detector read from this traffic."""
    rec = report.recommendation
    alt = None
    if rec.policy != "auto":
        alt = f"{rec.policy}:{rec.concurrency}" if rec.concurrency else rec.policy
        alt = f'fairstream.Dispatcher("{alt}")'
    why = _WHY[report.verdict][1 if lang == "zh" else 0]
    return 'fairstream.Dispatcher("auto")', alt, why


_WHY = {
    "static": (
        "Send similar lengths together, one batch at a time, so short answers are not held until"
        " long ones end. “auto” finds the batch size by itself.",
        "把长度相近的请求放在同一批、一批一批地发送，短回答就不会被长回答拖住。"
        "“auto” 会自己找出批大小。",
    ),
    "continuous": (
        "The server ends each request at its own end. Keep it full and send short requests"
        " first: “auto” does that.",
        "服务端让每个请求各自结束。保持服务端满载并让短请求先发：“auto” 正是这样做的。",
    ),
    "sequential": (
        "The server runs one request at a time: send them one at a time, shortest first.",
        "服务端一次只跑一个请求：一次发一个，短的先发。",
    ),
    "unknown": (
        "Not enough evidence: “auto” probes the server as it sends and adapts.",
        "证据不足：“auto” 会边发送边探测服务端并自动调整。",
    ),
}
