"""The seed's case from its four log lines: how the server batched, and what auto would change.

    python examples/seed_logs.py [LOGFILE]

Reads summary log lines (fairstream's en or zh format, the seed's own) from LOGFILE, or uses
the four lines of the seed's report. Prints the detector's verdict with its evidence, then a
replay through ``auto``, or the reason it refuses to answer. Same as
``fairstream analyze LOGFILE`` and ``fairstream replay LOGFILE``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import fairstream

SEED = """\
2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析471成功响应，用时 85.91秒 | 首字延迟: 26.541秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析263成功响应，用时 88.34秒 | 首字延迟: 7.496秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析375成功响应，用时 87.13秒 | 首字延迟: 45.048秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
"""  # noqa: E501, RUF001


def main() -> None:
    text = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else SEED
    parsed = fairstream.parse_summaries(text.splitlines())
    report = fairstream.analyze(parsed.traces)
    print(report.summary)
    for evidence in report.evidence:
        print(f"  {evidence.signal}: {evidence.detail}")
    try:
        answer = fairstream.replay(parsed.traces, policy="auto")
    except fairstream.ReplayRefused as refused:
        print("replay refuses:", "; ".join(refused.reasons))
        return
    low, high = answer.intervals["makespan_ratio"]
    ratio = answer.after.makespan / answer.before.makespan
    print(f"through auto: makespan {ratio:.2f}x, somewhere in {low:.2f}-{high:.2f}x")
    for note in answer.fit.notes:
        print("  note:", note)


if __name__ == "__main__":
    main()
