"""The HTML report in a real browser: Debian's chromium, driven by Playwright.

Pages from the seed's log lines (``fairstream analyze --html``), a static and a continuous
burst (``write_html``) and a ``fairstream bench --html`` run over real HTTP. Each opens with no
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
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairstream import ReferenceServer, ServerConfig, analyze, replay, write_html
from fairstream._cli import cli
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


def _cli(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _seed_page(tmp: Path) -> Path:
    log = tmp / "seed.log"
    log.write_text("\n".join(SEED_LINES) + "\n", encoding="utf-8")
    _cli("analyze", str(log), "--html", str(tmp / "seed.html"))
    return tmp / "seed.html"


def _burst_page(tmp: Path, config: ServerConfig, name: str) -> Path:
    traces = burst(config)
    gain = replay(traces, "auto")
    return write_html(analyze(traces), tmp / f"{name}.html", traces=traces, replay=gain)


def _bench_page(tmp: Path) -> Path:
    config = ServerConfig(mode="static", batch_size=4, release="stream", time_scale=0.05)
    with ReferenceServer.in_subprocess(config) as server:  # (a process: Playwright holds a loop)
        subprocess.run(
            [sys.executable, "-m", "fairstream", "bench", "--base-url", server.base_url,
             "--model", config.model, "--requests", "12", "--output-tokens", "mix:4,32",
             "--html", str(tmp / "bench.html")],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    return tmp / "bench.html"


def _order(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#rows g.row", "gs => gs.map(g => g.dataset.rid)"))


def _keys(page: Any, key: str) -> list[float]:
    script = f"gs => gs.map(g => +g.dataset.{key})"
    return list(page.eval_on_selector_all("#rows g.row", script))


@pytest.mark.parametrize("which", ["seed", "static", "continuous", "bench"])
def test_the_page_works_in_chromium(browser: Any, tmp_path: Path, which: str) -> None:
    path = {
        "seed": lambda: _seed_page(tmp_path),
        "static": lambda: _burst_page(tmp_path, STATIC, "static"),
        "continuous": lambda: _burst_page(tmp_path, CONTINUOUS, "continuous"),
        "bench": lambda: _bench_page(tmp_path),
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

    key = "first" if which == "seed" else "end"  # (the seed's four ended in one second)
    before = _order(page)
    page.click(f".controls button[data-key={key}]")
    after = _order(page)
    values = _keys(page, key)
    assert after != before and values == sorted(values)
    page.click(".controls button[data-key=start]")
    assert _order(page) == before

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
