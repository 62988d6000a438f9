"""The one-line summary per finished request, in English or in the seed's Chinese format.

``zh`` reproduces the line the seed's team already logs, character for character::

    LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | 输入tokens: 872 |
    输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09   (one line)
Prompt and response text never appear in a line.
"""

from __future__ import annotations

import logging
from typing import Literal

from ._trace import StreamTrace

__all__ = ["LOG_DATEFMT", "LOG_FORMAT", "LogSink", "format_line"]

Lang = Literal["en", "zh"]

#: the seed's logging layout: ``2025-10-10 11:04:08 [INFO] <line>``
LOG_FORMAT = "%(asctime)s [%(levelname)s] %(message)s"
LOG_DATEFMT = "%Y-%m-%d %H:%M:%S"

_DEFAULT_LABEL = {"en": "request", "zh": "LLM请求"}


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _int(value: int | None) -> str:
    return "-" if value is None else str(value)


def format_line(trace: StreamTrace, lang: Lang = "en", label: str | None = None) -> str:
    """The summary line of ``trace`` (``label`` overrides the trace's own)."""
    name = label if label is not None else trace.label
    name = _DEFAULT_LABEL[lang] if name is None else name
    u = trace.usage
    est = "~" if u.estimated else ""
    if lang == "zh":
        if trace.outcome == "ok":
            return (
                f"{name}{trace.request_id}成功响应，用时 {_num(trace.e2e, 2)}秒 | "
                f"首字延迟: {_num(trace.ttft, 3)}秒 | 输入tokens: {_int(u.prompt_tokens)} | "
                f"输出tokens: {est}{_int(u.completion_tokens)} | "
                f"总tokens: {_int(u.total_tokens)} | "
                f"tokens/秒: {_num(trace.tokens_per_second, 2)}"
            )
        verdict = "已取消" if trace.outcome == "cancelled" else "响应失败"
        return (
            f"{name}{trace.request_id}{verdict}，用时 {_num(trace.e2e, 2)}秒 | "
            f"首字延迟: {_num(trace.ttft, 3)}秒 | 输出tokens: {est}{_int(u.completion_tokens)} | "
            f"错误: {trace.error_type}: {trace.error_message}"
        )
    head = f"{name} {trace.request_id} {trace.outcome} in {_num(trace.e2e, 2)}s"
    line = (
        f"{head} | TTFT {_num(trace.ttft, 3)}s | in {_int(u.prompt_tokens)} | "
        f"out {est}{_int(u.completion_tokens)} | total {_int(u.total_tokens)} | "
        f"{_num(trace.tokens_per_second, 2)} tok/s"
    )
    if trace.outcome != "ok":
        line += f" | error {trace.error_type}: {trace.error_message}"
    return line


class LogSink:
    """Logs each trace's line through ``logging`` (logger ``fairstream``), fields in ``extra``."""

    def __init__(
        self,
        lang: Lang = "en",
        *,
        label: str | None = None,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
    ) -> None:
        if lang not in _DEFAULT_LABEL:
            raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
        self.lang: Lang = lang
        self.label = label
        self.logger = logger or logging.getLogger("fairstream")
        self.level = level

    def __call__(self, trace: StreamTrace) -> None:
        level = self.level if trace.outcome == "ok" else logging.WARNING
        if not self.logger.isEnabledFor(level):
            return
        extra = {
            "fairstream": {
                "request_id": trace.request_id,
                "label": trace.label,
                "model": trace.model,
                "outcome": trace.outcome,
                "ttft": trace.ttft,
                "ttfc": trace.ttfc,
                "e2e": trace.e2e,
                "hold": trace.hold,
                "tpot": trace.tpot,
                "prompt_tokens": trace.usage.prompt_tokens,
                "completion_tokens": trace.usage.completion_tokens,
                "tokens_estimated": trace.usage.estimated,
                "tokens_per_second": trace.tokens_per_second,
                "finish_reason": trace.finish_reason,
                "error_type": trace.error_type,
            }
        }
        self.logger.log(level, "%s", format_line(trace, self.lang, self.label), extra=extra)
