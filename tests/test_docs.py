"""The docs cannot rot: every code block on the site is a file under ``examples/`` (which
``test_examples_smoke.py`` runs), the README's snippets are excerpts of those files, every
public name has its reference entry, and every figure is rendered from a results file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import fairstream

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
SNIPPET = re.compile(r'^--8<-- "(examples/[\w.-]+?)(?::(\w+))?"$')
PAGES = [
    "index.md",
    "getting-started.md",
    "instrument-langchain.md",
    "instrument-openai.md",
    "logs-and-traces.md",
    "detect.md",
    "replay.md",
    "html-report.md",
    "dispatcher.md",
    "many-processes.md",
    "reference-server.md",
    "benchmarks.md",
    "real-servers.md",
    "errors.md",
    "metrics.md",
    "api.md",
    "changelog.md",
]


def blocks(text: str) -> list[str]:
    return [m.group(1) for m in FENCE.finditer(text)]


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_code_block_on_the_site_is_an_included_example(page: Path) -> None:
    for block in blocks(page.read_text()):
        lines = block.strip().splitlines()
        assert len(lines) == 1, f"{page.name}: a code block must include one example:\n{block}"
        m = SNIPPET.match(lines[0])
        assert m, f"{page.name}: {lines[0]!r} is not an include of a file under examples/"
        path = ROOT / m.group(1)
        assert path.is_file(), f"{page.name}: {m.group(1)} does not exist"
        if m.group(2):
            assert f"--8<-- [start:{m.group(2)}]" in path.read_text(), (page.name, m.group(0))


def test_the_site_has_every_page_and_the_nav_lists_them() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert (DOCS / page).is_file(), page
        assert f": {page}" in nav, f"{page} is not in mkdocs.yml's nav"
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)


def test_every_public_name_has_a_reference_entry() -> None:
    api = (DOCS / "api.md").read_text()
    missing = [n for n in fairstream.__all__ if not re.search(rf"[.`]{re.escape(n)}\b", api)]
    assert not missing, missing


def excerpt_of_an_example(block: str) -> bool:
    """``block``'s lines, in order, in some example, indented there as one piece."""
    want = block.rstrip("\n").splitlines()
    for path in (ROOT / "examples").glob("*.py"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            indent = len(line) - len(line.lstrip())
            seg = lines[i : i + len(want)]
            if (
                all(not ln.strip() or ln.startswith(" " * indent) for ln in seg)
                and [ln[indent:] for ln in seg] == want
            ):
                return True
    return False


def test_the_readme_is_one_screen_and_its_snippets_are_tested_examples() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    first, *rest = blocks(text)
    assert first.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install -e '.[report]'"
        " && .venv/bin/fairstream demo",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest",
    ]
    assert text.index("```bash") < text.index("\n## "), "the set-up commands come first"
    for block in rest:
        assert excerpt_of_an_example(block), f"not an excerpt of an example:\n{block}"


def test_the_benchmarks_readme_fits_300_lines() -> None:
    assert len((ROOT / "benchmarks" / "README.md").read_text().splitlines()) <= 300


def test_rendered_figures_match_the_results_files() -> None:
    """What CI checks: ``benchmarks/report.py`` would change no page."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "report.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
