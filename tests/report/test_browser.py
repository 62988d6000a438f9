"""The HTML report in a real browser: Debian's chromium, driven by Playwright.

Pages from the seed's log lines (``fairstream analyze --html``), a static and a continuous
burst (``write_html``), ``fairstream replay --html`` on the static burst's JSONL, and
``fairstream bench --html`` and ``fairstream probe --html`` over real HTTP. Each opens with no
console error, shows its verdict, shows a bar's tooltip on hover, and reorders its rows when
sorted. The static page's screenshot is what the docs show: ``FAIRSTREAM_UPDATE_SCREENSHOT=1``
writes it to ``docs/images/html-report.png``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fairstream import JsonlSink, ReferenceServer, ServerConfig, analyze, replay, write_html
from tests.report._pages import CONTINUOUS, SEED_LINES, STATIC, burst

ROOT = Path(__file__).resolve().parents[2]
SHOT = ROOT / "docs" / "images" / "html-report.png"
CHROMIUM = os.environ.get("FAIRSTREAM_CHROMIUM") or shutil.which("chromium") or ""
REQUIRED = os.environ.get("FAIRSTREAM_REQUIRE_REAL") == "1"
# as the machine's notes say: no sandbox as root, and no background calls to a closed network
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM:
        if REQUIRED:
            pytest.fail("no chromium (apt-get install chromium; .ci/run does)")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("playwright is not installed (the test extra has it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, chromium_sandbox=False)
        yield b
        b.close()


def _seed_page(tmp: Path) -> Path:
    log = tmp / "seed.log"
    log.write_text("\n".join(SEED_LINES) + "\n", encoding="utf-8")
    _fairstream("analyze", str(log), "--html", str(tmp / "seed.html"))
    return tmp / "seed.html"


def _burst_page(tmp: Path, config: ServerConfig, name: str) -> Path:
    traces = burst(config)
    gain = replay(traces, "auto")
    return write_html(analyze(traces), tmp / f"{name}.html", traces=traces, replay=gain)


def _bench_page(tmp: Path) -> Path:
    config = ServerConfig(mode="static", batch_size=4, release="stream", time_scale=0.05)
    with ReferenceServer.in_subprocess(config) as server:
        _fairstream(
            "bench", "--base-url", server.base_url, "--model", config.model, "--requests", "12",
            "--output-tokens", "mix:4,32", "--html", str(tmp / "bench.html"),
        )  # fmt: skip
    return tmp / "bench.html"


def _probe_page(tmp: Path) -> Path:
    config = ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.1)
    with ReferenceServer.in_subprocess(config) as server:
        _fairstream(
            "probe", "--base-url", server.base_url, "--model", config.model, "--budget", "16",
            "--html", str(tmp / "probe.html"),
        )  # fmt: skip
    return tmp / "probe.html"


def _replay_page(tmp: Path) -> Path:
    traces = tmp / "static.jsonl"
    sink = JsonlSink(traces)
    for t in burst(STATIC):
        sink(t)
    sink.close()
    _fairstream("replay", str(traces), "--html", str(tmp / "replay.html"))
    return tmp / "replay.html"


def _fairstream(*args: str) -> None:
    """The command line in its own process (Playwright's sync API holds an event loop here)."""
    subprocess.run(
        [sys.executable, "-m", "fairstream", *args], check=True, capture_output=True, timeout=120
    )


def _order(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#rows g.row", "gs => gs.map(g => g.dataset.rid)"))


def _keys(page: Any, key: str) -> list[float]:
    script = f"gs => gs.map(g => +g.dataset.{key})"
    return list(page.eval_on_selector_all("#rows g.row", script))


@pytest.mark.parametrize("which", ["seed", "static", "continuous", "bench", "probe", "replay"])
def test_the_page_works_in_chromium(browser: Any, tmp_path: Path, which: str) -> None:
    path = {
        "seed": lambda: _seed_page(tmp_path),
        "static": lambda: _burst_page(tmp_path, STATIC, "static"),
        "continuous": lambda: _burst_page(tmp_path, CONTINUOUS, "continuous"),
        "bench": lambda: _bench_page(tmp_path),
        "probe": lambda: _probe_page(tmp_path),
        "replay": lambda: _replay_page(tmp_path),
    }[which]()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")

    verdict = page.locator("#verdict-text")
    assert verdict.is_visible() and verdict.inner_text().strip()
    assert page.locator("#gain, #refusal").count() == 1  # replay's answer, or why not
    if which == "seed":
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        assert "连续批处理" in verdict.inner_text()
    if which == "static":
        assert "statically in groups of 8" in verdict.inner_text()

    rows = page.locator("#rows g.row")
    second = rows.nth(1)
    second.hover()
    tip = page.locator("#tip")
    tip.wait_for(state="visible", timeout=5000)
    assert second.get_attribute("data-rid") in tip.inner_text()

    before = _order(page)
    moved = 0
    for key in ("first", "end"):
        unsorted = _keys(page, key) != sorted(_keys(page, key))
        page.click(f".controls button[data-key={key}]")
        values = _keys(page, key)
        assert values == sorted(values), key
        if unsorted:  # rows out of this key's order in start order: sorting moves them
            assert _order(page) != before, key
            moved += 1
        page.click(".controls button[data-key=start]")
        assert _order(page) == before
    if which in ("seed", "static", "continuous"):
        assert moved  # these pages' rows do change order (the seed's by first token)

    assert requests == [path.as_uri()]  # nothing fetched but the page itself
    assert errors == []
    if which == "static":  # the docs' picture: the verdict, the gain and the timeline at once
        page.set_viewport_size({"width": 1280, "height": 2000})  # (no scrolling)
        rows.nth(5).hover()
        tip.wait_for(state="visible", timeout=5000)
        shot = tmp_path / "html-report.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("FAIRSTREAM_UPDATE_SCREENSHOT") == "1":
            SHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, SHOT)
        assert SHOT.exists(), "the docs' screenshot: FAIRSTREAM_UPDATE_SCREENSHOT=1 makes it"
    page.close()


def test_a_script_in_a_label_shows_as_text(browser: Any, tmp_path: Path) -> None:
    """A label ``<script>alert(1)</script>`` runs nothing: no dialog, and the tooltip shows it."""
    label = "<script>alert(1)</script>"
    traces = [replace(t, label=label) for t in burst(STATIC, n=8)]
    path = write_html(analyze(traces), tmp_path / "xss.html", traces=traces, title=label)
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.locator("#rows g.row").first.hover()
    page.locator("#tip").wait_for(state="visible", timeout=5000)
    assert label in page.locator("#tip").inner_text()
    assert page.locator("h1").inner_text() == label
    assert dialogs == []
    page.close()
