"""The public API is exactly what ``__all__`` says, sorted, and every name resolves."""

from __future__ import annotations

import fairstream
import fairstream.server


def test_all_is_sorted_and_resolves() -> None:
    for module in (fairstream, fairstream.server):
        names = list(module.__all__)
        assert names == sorted(names)
        assert len(set(names)) == len(names)
        for name in names:
            assert getattr(module, name) is not None


def test_every_public_name_is_exported() -> None:
    exported = set(fairstream.__all__)
    modules = {"server", "cli"}
    public = {n for n in dir(fairstream) if not n.startswith("_")} - modules
    assert public <= exported, public - exported


def test_importing_fairstream_loads_no_optional_integration() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fairstream; "
        "print(sorted(m for m in ('openai', 'langchain_core', 'langchain_openai', "
        "'opentelemetry', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
