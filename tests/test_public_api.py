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
