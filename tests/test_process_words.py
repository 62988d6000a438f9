"""Tracked files speak of what the code does, not of how it was made: no phrase that numbers
or dates a round of development. History lives in ``git log``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ["README.md", "CHANGELOG.md", "docs", "src", "tests", "benchmarks", "examples"]
# results files are data: they carry the date and commit they were measured at
SKIP = re.compile(r"^benchmarks/results/|^tests/test_process_words\.py$")

_ROUND = r"(?:session|sprint|iteration|milestone|round|stop)"
PATTERNS = [
    # the word of a round, then its number (singular, plural, hyphenated, capitalised)
    re.compile(rf"\b{_ROUND}s?[ -]?#?\d+", re.IGNORECASE),
    # the round of work named without a number ("this ...", "a working ...")
    re.compile(
        r"\b(?:this|that|last|next|previous|earlier|later|working|each|every|one) session\b",
        re.IGNORECASE,
    ),
    # a calendar date in prose: ISO, "Month D, YYYY" or "D Mon YYYY"
    re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
    re.compile(
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? 20\d\d\b"
    ),
    re.compile(r"\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* 20\d\d\b"),
    re.compile(r"\bdiary\b", re.IGNORECASE),
    # a tracker's numbered item as the reason for code
    re.compile(r"\bissues? #?\d+", re.IGNORECASE),
]
# what is not process: the seed's log lines (a timestamp, then the level) and API versions;
# the CHANGELOG's release headings carry a date by Keep a Changelog's convention
ALLOWED = [
    re.compile(r"\b20\d\d-\d\d-\d\d \d\d:\d\d:\d\d\b"),
    re.compile(r"api[_-]version", re.IGNORECASE),
    re.compile(r"^## \[[^\]]+\] - 20\d\d-\d\d-\d\d$"),
]


def offending(path: str, text: str) -> list[str]:
    """The lines of ``text`` with a process phrase, as ``path:line: text``."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if any(a.search(line) for a in ALLOWED):
            continue
        if any(p.search(line) for p in PATTERNS):
            out.append(f"{path}:{n}: {line.strip()[:120]}")
    return out


def tracked() -> list[str]:
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *SCOPE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [f for f in files if not SKIP.search(f) and (ROOT / f).is_file()]


# the forms below are built from their parts, so this file holds no such phrase itself
_W, _Y = "ses" + "sion", "20" + "26"


def test_the_check_catches_each_form() -> None:
    """Each form found in the wild is caught; the seed's log lines and pytest's scopes are not."""
    caught = [
        f"figures in benchmarks/README, {_W} 22",
        f"run in {_W}s 50-55 on one 2-core VM",
        f"on the {_W}-45 machine",
        f"({_W.capitalize()} 15's machine: 2-17% within)",
        f"more than a working {_W} here",
        f"the demo, trimmed (real output, {_Y}-12-07)",
        f"measured on December 2, {_Y}",
        "a 6,000-line benchmark " + "di" + "ary",
        "checked against " + "iss" + "ue 14's targets",
    ]
    for line in caught:
        assert offending("x", line), line
    passed = [
        "2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒",
        '@pytest.fixture(scope="session")',
        'AsyncAzureOpenAI(base_url=url, api_key="k", api_version="2024-10-21")',
        "one more for each round of first tokens",
        f"## [0.1.0] - {_Y}-12-07",
    ]
    for line in passed:
        assert not offending("x", line), line


def test_no_tracked_file_speaks_of_the_development_process() -> None:
    files = tracked()
    assert len(files) > 100  # the scope really was read
    found = [hit for f in files for hit in offending(f, (ROOT / f).read_text(errors="replace"))]
    assert not found, f"{len(found)} lines:\n" + "\n".join(found[:60])
