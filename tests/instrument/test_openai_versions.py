"""The openai SDK this run uses; CI runs the openai tests under 3.x (httpx2) and 2.x (httpx)."""

from __future__ import annotations

import os

import openai


def test_expected_openai_major_is_installed() -> None:
    major = int(openai.__version__.split(".")[0])
    print(f"\nopenai {openai.__version__}")
    expected = os.environ.get("FAIRSTREAM_EXPECT_OPENAI_MAJOR")
    if expected is not None:
        assert major == int(expected), f"expected openai {expected}.x, found {openai.__version__}"
    assert major >= 2
