"""The summary line: the seed's zh format character for character, and the en one."""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime

import pytest

from fairstream import LOG_DATEFMT, LOG_FORMAT, LogSink, Recorder, StreamTrace, Usage, format_line

SEED_LINE = (
    "2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | "
    "输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09"
)


def seed_trace(**changes: object) -> StreamTrace:
    base = StreamTrace(
        request_id="455",
        label="LLM图像分析",
        sent=10.0,
        first_content=10.0 + 63.554,
        end=10.0 + 86.08,
        usage=Usage(872, 8, 880),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_zh_line_is_the_seeds_line() -> None:
    record = logging.LogRecord(
        "fairstream", logging.INFO, __file__, 1, "%s", (format_line(seed_trace(), "zh"),), None
    )
    record.created = datetime(2025, 10, 10, 11, 4, 8).timestamp()
    assert logging.Formatter(LOG_FORMAT, LOG_DATEFMT).format(record) == SEED_LINE


@pytest.mark.parametrize(
    ("rid", "total", "ttft"),
    [("471", 85.91, 26.541), ("263", 88.34, 7.496), ("375", 87.13, 45.048)],
)
def test_zh_line_matches_the_other_seed_lines(rid: str, total: float, ttft: float) -> None:
    trace = StreamTrace(
        request_id=rid,
        label="LLM图像分析",
        sent=0.0,
        first_content=ttft,
        end=total,
        usage=Usage(872, 8, 880),
    )
    expected = (
        f"LLM图像分析{rid}成功响应，用时 {total:.2f}秒 | 首字延迟: {ttft:.3f}秒 | "
        "输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09"
    )
    assert format_line(trace, "zh") == expected


def test_failure_lines_say_what_failed() -> None:
    failed = StreamTrace(
        request_id="7",
        label="LLM图像分析",
        sent=0.0,
        end=3.2,
        outcome="error",
        error_type="APIConnectionError",
        error_message="reset",
        usage=Usage(None, 2, None, estimated=True),
    )
    zh = format_line(failed, "zh")
    assert zh.startswith("LLM图像分析7响应失败，用时 3.20秒")
    assert "错误: APIConnectionError: reset" in zh
    assert "输出tokens: ~2" in zh  # counted, not reported by the server
    en = format_line(failed, "en")
    assert en.startswith("request 7 error in 3.20s") or en.startswith("LLM图像分析 7 error")
    assert "error APIConnectionError: reset" in en


def test_log_sink_logs_one_line_with_structured_fields(caplog: pytest.LogCaptureFixture) -> None:
    rec = Recorder([LogSink("zh")])
    with caplog.at_level(logging.INFO, logger="fairstream"):
        rec.emit(seed_trace())
    (record,) = caplog.records
    assert record.getMessage() == SEED_LINE.split("[INFO] ", 1)[1]
    fields = record.fairstream  # type: ignore[attr-defined]
    assert fields["request_id"] == "455"
    assert fields["ttft"] == pytest.approx(63.554)
    assert fields["completion_tokens"] == 8


def test_text_is_never_in_the_line() -> None:
    trace = seed_trace(content="secret answer text")
    assert "secret" not in format_line(trace, "en") + format_line(trace, "zh")


async def test_per_chunk_debug_lines_are_opt_in(caplog: pytest.LogCaptureFixture) -> None:
    from fairstream import ReferenceServer
    from tests.conftest import FAST
    from tests.instrument._families import consume

    async with ReferenceServer(FAST) as server:
        for debug in (False, True):
            rec = Recorder(chunk_debug=debug)
            caplog.clear()
            with caplog.at_level(logging.DEBUG, logger="fairstream"):
                await consume("httpx", server.base_url, rec, 3)
            lines = [r.getMessage() for r in caplog.records if "chunk at" in r.getMessage()]
            assert len(lines) == (len(rec.traces[0].chunk_times) if debug else 0)
