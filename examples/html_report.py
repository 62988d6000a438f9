"""The seed's four log lines as an HTML report to forward: a Chinese page, as the input is.

    python examples/html_report.py [OUT.html]

Reads the four lines of the seed's report, asks the detector how the server batched and
replay what ``auto`` would gain (or why it will not say from four lines), and writes one
self-contained page (extra ``report``). Same as ``fairstream analyze seed.log --html OUT.html``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import fairstream

SEED = """\
2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析471成功响应，用时 85.91秒 | 首字延迟: 26.541秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析263成功响应，用时 88.34秒 | 首字延迟: 7.496秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
2025-10-10 11:04:08 [INFO] LLM图像分析375成功响应，用时 87.13秒 | 首字延迟: 45.048秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09
"""  # noqa: E501, RUF001


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.gettempdir()) / "seed.html"
    parsed = fairstream.parse_summaries(SEED.splitlines())
    report = fairstream.analyze(parsed.traces, resolution=parsed.resolution)
    gain: fairstream.Replay | fairstream.ReplayRefused
    try:
        gain = fairstream.replay(parsed.traces, "auto", parsed.resolution)
    except fairstream.ReplayRefused as refused:
        gain = refused  # the page states the refusal and its reasons
    fairstream.write_html(
        report, out, traces=parsed.traces, replay=gain, resolution=parsed.resolution
    )  # the language follows the input: these lines give a Chinese page
    print(report.summary)
    print(f"HTML report: {out}")


if __name__ == "__main__":
    main()
