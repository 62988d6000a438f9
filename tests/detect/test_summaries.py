"""Summary-log analysis: the seed's lines and table, our own formats, and messy input."""

from __future__ import annotations

import random

import pytest

from fairstream import StreamTrace, Usage, analyze, format_line, parse_summaries

SEED_LINES = [
    "2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析471成功响应，用时 85.91秒 | 首字延迟: 26.541秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析263成功响应，用时 88.34秒 | 首字延迟: 7.496秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析375成功响应，用时 87.13秒 | 首字延迟: 45.048秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
]
SEED_TABLE = [
    "| 请求ID | 首字延迟 | 总时间 | 首字后耗时 |",
    "|---|---|---|---|",
    "| 129 | 0.913秒 | 5.70秒 | 4.79秒 |",
    "| 131 | 3.676秒 | 5.68秒 | 2.00秒 |",
    "| 140 | 5.396秒 | 5.60秒 | 0.20秒 |",
    "| 142 | 5.374秒 | 5.58秒 | 0.21秒 |",
]


def _evidence(report: object) -> dict[str, object]:
    return {e.signal: e.value for e in report.evidence}  # type: ignore[attr-defined]


def test_seed_log_lines_are_synchronized_completion() -> None:
    parsed = parse_summaries(SEED_LINES)
    assert parsed.kind == "log" and parsed.skipped == 0 and parsed.resolution == 1.0
    assert sorted(t.request_id for t in parsed.traces) == ["263", "375", "455", "471"]
    assert {t.label for t in parsed.traces} == {"LLM图像分析"}
    t455 = next(t for t in parsed.traces if t.request_id == "455")
    assert t455.ttft == pytest.approx(63.554) and t455.e2e == pytest.approx(86.08)
    assert t455.usage.prompt_tokens == 872 and t455.usage.completion_tokens == 8
    report = analyze(parsed.traces, resolution=parsed.resolution)
    assert report.synchronized_completion
    ev = _evidence(report)
    assert ev["post_first_slope"] == pytest.approx(-1.0, abs=0.15)
    # first tokens 56 s apart, one common end: decodes waited for newcomers
    assert report.verdict == "continuous" and report.prefill_stalls is True
    assert report.confidence <= 0.6  # summary lines alone never make a confident verdict


def test_seed_table_is_synchronized_completion() -> None:
    parsed = parse_summaries(SEED_TABLE)
    assert parsed.kind == "table"
    assert parsed.skipped == 2  # the header and the rule
    first = parsed.traces[0]
    assert (first.request_id, first.ttft, first.e2e) == ("129", 0.913, 5.70)
    report = analyze(parsed.traces, resolution=parsed.resolution)
    assert report.synchronized_completion
    assert _evidence(report)["post_first_slope"] == pytest.approx(-1.0, abs=0.15)


def test_table_rows_whose_columns_do_not_add_up_are_not_rows() -> None:
    parsed = parse_summaries(["| 7 | 1.0秒 | 5.0秒 | 3.0秒 |", "| 8 | 6.0 | 5.0 |"])
    assert parsed.traces == [] and parsed.skipped == 2


def _trace(rid: str, sent: float, ttft: float, e2e: float, out: int | None) -> StreamTrace:
    return StreamTrace(
        request_id=rid,
        label="job",
        sent=sent,
        first_content=sent + ttft,
        end=sent + e2e,
        usage=Usage(100, out, None if out is None else 100 + out, out is None),
        wall_anchor=1_760_000_000.0,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_our_own_lines_parse_back(lang: str) -> None:
    import time

    traces = [_trace(str(i), 0.1 * i, 0.5 + i, 3.0 + i, 10 + i) for i in range(4)]
    lines = []
    for t in traces:
        assert t.wall_end is not None
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t.wall_end))
        lines.append(f"{stamp},{int(t.wall_end % 1 * 1000):03d} [INFO] {format_line(t, lang)}")
    parsed = parse_summaries(lines)
    assert parsed.kind == "log" and parsed.skipped == 0 and parsed.resolution == 0.001
    back = {t.request_id: t for t in parsed.traces}
    for t in traces:
        b = back[t.request_id]
        assert b.label == "job"
        assert b.usage.completion_tokens == t.usage.completion_tokens
        assert b.ttft == pytest.approx(t.ttft, abs=0.002)
        assert b.e2e == pytest.approx(t.e2e, abs=0.01)
        assert b.end is not None and t.end is not None
        assert b.end - min(x.end or 0 for x in parsed.traces) == pytest.approx(
            t.end - min(x.end or 0 for x in traces), abs=0.002
        )


def test_failure_lines_count_but_are_not_analyzed() -> None:
    failed = StreamTrace(
        request_id="9", sent=0.0, end=1.0, outcome="error", error_type="X", error_message="boom"
    )
    lines = [*SEED_LINES, f"2025-10-10 11:04:09 [WARNING] {format_line(failed, 'zh')}"]
    parsed = parse_summaries(lines)
    assert [t.outcome for t in parsed.traces].count("error") == 1
    report = analyze(parsed.traces, resolution=parsed.resolution)
    assert report.requests == 4 and _evidence(report)["dropped"] == 1


def test_garbage_lines_are_skipped_and_counted_shuffling_changes_nothing() -> None:
    garbage = [
        "",
        "Traceback (most recent call last):",
        "\x00\xff binary",
        "成功响应 but no numbers",
    ]
    lines = SEED_LINES + garbage
    random.Random(3).shuffle(lines)
    parsed = parse_summaries(lines)
    assert parsed.skipped == 3  # the empty line is not counted
    shuffled = analyze(parsed.traces, resolution=parsed.resolution)
    plain = parse_summaries(SEED_LINES)
    ordered = analyze(plain.traces, resolution=plain.resolution)
    assert shuffled.to_dict() == ordered.to_dict()


def test_lines_without_usage_still_parse() -> None:
    line = "2025-10-10 11:04:08 [INFO] req7成功响应，用时 2.00秒 | 首字延迟: 0.500秒 | 输入tokens: - | 输出tokens: - | 总tokens: - | tokens/秒: -"
    parsed = parse_summaries([line])
    (t,) = parsed.traces
    assert t.request_id == "7" and t.label == "req" and t.usage.completion_tokens is None
    assert analyze(parsed.traces).verdict == "unknown"
