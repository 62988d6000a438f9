"""``auto``'s decision record equals its golden file (``data/auto_decisions.txt``).

A behaviour change regenerates it with ``FAIRSTREAM_UPDATE_GOLDEN=1 pytest
tests/dispatch/test_decisions.py``, committed with a message that says why.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tests.dispatch._decisions import SCENARIOS, record_all

GOLDEN = Path(__file__).parent / "data" / "auto_decisions.txt"


def test_decision_record_matches_the_golden_file() -> None:
    got = "\n".join(record_all()) + "\n"
    if os.environ.get("FAIRSTREAM_UPDATE_GOLDEN"):
        GOLDEN.write_text(got)
    want = GOLDEN.read_text()
    if got != want:
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), "golden", "now", n=2, lineterm=""
        )
        raise AssertionError("auto decided otherwise:\n" + "\n".join(list(diff)[:60]))


def test_every_scenario_moves_auto_out_of_probing() -> None:
    """The scenarios are worth pinning: each reaches a decided state (not only probing)."""
    text = GOLDEN.read_text()
    for s in SCENARIOS:
        block = text.split(f"# {s.name}\n")[1].split("\n# ")[0]
        states = {line.split()[3] for line in block.splitlines()}
        assert states - {"probing"}, s.name
