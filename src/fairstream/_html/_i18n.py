"""The page's words in English and Chinese: every label, and the verdict in plain words.

The detector's own sentences are English; here the page says the same things in either
language from the report's fields, so a Chinese page is Chinese throughout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

__all__ = ["Lang", "guess_lang", "words"]

Lang = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")

_WORDS: dict[str, tuple[str, str]] = {
    "title": ("fairstream report", "fairstream 报告"),
    "verdict": ("Verdict", "结论"),
    "confidence": ("confidence", "置信度"),
    "evidence": ("Evidence", "证据"),
    "signal": ("signal", "信号"),
    "value": ("value", "取值"),
    "meaning": ("what it means", "含义"),
    "timeline": ("Timeline", "时间线"),
    "timeline_note": (
        "One row per request, from the moment it was queued. Hover a bar for its figures.",
        "每个请求一行，从排队开始。把鼠标移到条形上可查看该请求的数据。",
    ),
    "sort_by": ("Sort rows by", "排序依据"),
    "sort_start": ("start", "开始时间"),
    "sort_first": ("first token", "首字时间"),
    "sort_end": ("end", "结束时间"),
    "queued": ("queued in the client", "在客户端排队"),
    "waiting": ("waiting for the first token", "等待首字"),
    "streaming": ("streaming", "生成中"),
    "held": ("held open after its content ended", "内容结束后仍被挂起"),
    "failed": ("failed or cancelled", "失败或取消"),
    "sync_mark": ("finishes that coincide", "同时结束"),
    "seconds": ("seconds", "秒"),
    "distributions": ("Distributions", "分布"),
    "dist_note": (
        "Share of requests at or below each value (cumulative).",
        "不超过各取值的请求占比（累积分布）。",
    ),
    "ttft": ("time to first token (s)", "首字延迟（秒）"),
    "e2e": ("end-to-end time (s)", "总用时（秒）"),
    "tps": ("tokens per second", "每秒 tokens"),
    "recommendation": ("What to change", "建议"),
    "expected_gain": ("What it would gain", "预期收益"),
    "replay_refused": (
        "fairstream replay refuses to estimate the gain from these requests:",
        "fairstream replay 拒绝根据这些请求估计收益：",
    ),
    "replay_none": (
        "No replay was run for this page.",
        "本页未运行 replay。",
    ),
    "bench": ("Benchmark", "压测结果"),
    "percentiles": ("Percentiles (seconds)", "分位数（秒）"),
    "metric": ("metric", "指标"),
    "mean": ("mean", "均值"),
    "arms": ("Runs side by side", "多组运行对比"),
    "arm": ("run", "运行"),
    "throughput": ("output tokens/s", "输出 tokens/秒"),
    "makespan": ("makespan (s)", "总耗时（秒）"),
    "ok": ("ok", "成功"),
    "errors": ("errors", "错误"),
    "requests": ("requests", "请求数"),
    "request": ("request", "请求"),
    "outcome": ("outcome", "结果"),
    "queue": ("queued (s)", "排队（秒）"),
    "tokens": ("output tokens", "输出 tokens"),
    "held_s": ("held open (s)", "挂起（秒）"),
    "made_by": ("Made by fairstream from the client's side.", "由 fairstream 从客户端一侧生成。"),
    "no_requests": ("No finished requests to draw.", "没有可绘制的已完成请求。"),
    "ttft_short": ("TTFT", "首字延迟"),
    "e2e_short": ("E2E", "总用时"),
    "tpot_short": ("TPOT", "每 token 用时"),
    "itl_short": ("ITL", "token 间隔"),
    "queue_short": ("queue", "排队"),
    "submit_short": ("from submission", "自提交起"),
}


def words(lang: Lang) -> dict[str, str]:
    """Every label of the page in ``lang``."""
    i = 1 if lang == "zh" else 0
    return {key: pair[i] for key, pair in _WORDS.items()}


def guess_lang(texts: Iterable[str | None]) -> Lang:
    """Chinese when the input speaks it (a CJK character in any of ``texts``), else English."""
    return "zh" if any(t and _CJK.search(t) for t in texts) else "en"
