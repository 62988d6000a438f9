"""The HTML report's content: verdict, language, escaping, size, and that it stands alone."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

import fairstream
from fairstream import analyze, render_html, replay, write_html
from fairstream._html._i18n import _WORDS, guess_lang
from tests.report._pages import CONTINUOUS, STATIC, burst, seed

XSS = "<script>alert(1)</script>"


class _Visible(HTMLParser):
    """The words a reader sees: no tags, attributes, scripts or styles, and no code (signal
    names and settings are identifiers, as in ``--json``)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self._hidden += tag in ("script", "style", "code")

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("script", "style", "code")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def _visible(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    return " ".join(parser.parts)


def _text(html: str, element_id: str) -> str:
    m = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', html)
    assert m, f"no #{element_id}"
    return m.group(1)


def test_the_seeds_lines_give_a_chinese_page_with_the_detectors_verdict() -> None:
    traces, resolution = seed()
    report = analyze(traces, resolution=resolution)
    html = render_html(report, traces=traces, resolution=resolution)
    assert '<html lang="zh-CN">' in html  # the input speaks Chinese
    verdict = _text(html, "verdict-text")
    assert "连续批处理" in verdict and "预填充" in verdict  # continuous, prefill stalls
    assert f"置信度 {report.confidence:.2f}" in verdict
    # what the seed's team saw: the four finished together, one waited 58 s for the others
    waited = _text(html, "waited")
    assert "4 个请求中有 4 个几乎同时结束" in waited
    assert "58.3 秒" in waited  # 8 tokens in 80.8 s after its first token, 22.5 s for another


def test_a_static_burst_reads_static_with_its_batch_and_the_short_requests_wait() -> None:
    traces = burst(STATIC)
    report = analyze(traces)
    html = render_html(report, traces=traces)
    assert '<html lang="en">' in html
    assert _text(html, "verdict-text") == report.summary.replace("'", "&#39;")
    assert "statically in groups of 8" in report.summary
    waited = _text(html, "waited")
    assert waited.startswith("Short requests waited up to") or "finished together" in waited
    assert html.count('class="mark"') >= 3  # 32 requests, batches of 8: their ends coincide


def test_every_label_is_translated() -> None:
    traces = burst(CONTINUOUS)
    arms = [("a", {}), ("b", {})]
    zh = _visible(render_html(analyze(traces), traces=traces, lang="zh", arms=arms))
    en = _visible(render_html(analyze(traces), traces=traces, lang="en", arms=arms))
    shown = 0
    for key, (english, chinese) in _WORDS.items():
        assert english != chinese, key
        word = re.compile(rf"(?<!\w){re.escape(english)}(?!\w)")
        if word.search(en):
            shown += 1
            assert not word.search(zh), f"{key}: {english!r} left in the Chinese page"
    assert shown >= 30  # the check saw the page's labels


def test_the_language_follows_the_input() -> None:
    assert guess_lang(["LLM图像分析455成功响应"]) == "zh"
    assert guess_lang(["request 7 ok in 2.00s", None]) == "en"
    with pytest.raises(ValueError, match="lang"):
        render_html(analyze([]), lang="fr")  # type: ignore[arg-type]


def test_user_strings_are_text_not_markup() -> None:
    traces = [replace(t, label=XSS, model=XSS) for t in burst(STATIC, n=8)]
    html = render_html(analyze(traces), traces=traces, arms=[(XSS, {"policy": XSS})], title=XSS)
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 2  # ours: the words (JSON) and the page's script


def test_the_page_stands_alone() -> None:
    traces = burst(STATIC)
    html = render_html(analyze(traces), traces=traces)
    assert not re.search(r"\b(src|href)\s*=", html)  # nothing to fetch: no scripts, styles
    assert "url(" not in html and "@import" not in html and "http" not in html.lower()


def test_a_thousand_requests_stay_under_a_megabyte(tmp_path: Path) -> None:
    traces = [
        replace(t, request_id=f"{k}-{t.request_id}")
        for k in range(32)
        for t in burst(STATIC, n=32, seed=k)
    ][:1000]
    path = write_html(analyze(traces), tmp_path / "big.html", traces=traces)
    size = path.stat().st_size
    assert path.read_text(encoding="utf-8").count('class="row"') == 1000
    assert size <= 1_000_000, size


def test_the_expected_gain_or_the_refusal_is_stated() -> None:
    traces = burst(STATIC)
    gained = render_html(replay(traces, "auto"), traces=traces)
    gain = _text(gained, "gain")
    assert gain.startswith("Through auto: makespan") and "x (" in gain
    few, resolution = seed()
    with pytest.raises(fairstream.ReplayRefused) as refused:
        replay(few[:2], "auto", resolution)
    html = render_html(analyze(few), traces=few, replay=refused.value, lang="en")
    assert "refuses to estimate the gain" in html
    for reason in refused.value.reasons:
        assert reason.replace("'", "&#39;") in html


def test_several_runs_are_compared_side_by_side() -> None:
    a = {"policy": "naive", "makespan": 9.0, "output_tokens_per_second": 100.0,
         "e2e": {"mean": 5.0, "p50": 5.6, "p90": 8.0, "p99": 9.0, "n": 32}}  # fmt: skip
    b = {"policy": "auto", "makespan": 4.5, "output_tokens_per_second": 200.0,
         "e2e": {"mean": 2.0, "p50": 0.5, "p90": 4.0, "p99": 4.5, "n": 32}}  # fmt: skip
    html = render_html(analyze([]), arms=[("naive", a), ("auto", b)])
    table = html[html.index('id="arms"') :]
    assert "4.5 (0.50x)" in table  # the makespan, against the first run
    assert "0.5 (0.09x)" in table  # E2E p50


def test_without_jinja2_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(fairstream.MissingExtraError, match=r"fairstream\[report\]"):
        render_html(analyze([]))


def test_bench_compare_writes_both_runs_side_by_side(tmp_path: Path) -> None:
    """``fairstream bench --compare A B --html``: two results files, one page."""
    from click.testing import CliRunner

    from fairstream._cli import cli

    e2e = {"mean": 5.0, "p50": 5.6, "p90": 8.0, "p99": 9.0, "n": 32}
    run = {"policy": "naive", "output_tokens_per_second": 100.0, "ok": 32, "errors": 0,
           "goodput_requests_per_second": 3.0, "e2e": e2e, "submit_e2e": e2e}  # fmt: skip
    a, b = tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"
    for path, span in ((a, 9.0), (b, 4.5)):
        path.parent.mkdir()
        path.write_text(json.dumps({**run, "makespan": span}))
    page = tmp_path / "compare.html"
    result = CliRunner().invoke(cli, ["bench", "--compare", str(a), str(b), "--html", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    table = html[html.index('id="arms"') :]
    assert str(a) in table and str(b) in table and "4.5 (0.50x)" in table
