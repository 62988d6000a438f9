"""The dispatch package shows its parts: a core, the policies, the shared pool; no mixins."""

from __future__ import annotations

import ast
from pathlib import Path

from fairstream._dispatch.policies.auto import _state
from fairstream._dispatch.policies.auto._auto import STATES

DISPATCH = Path(__file__).resolve().parents[2] / "src" / "fairstream" / "_dispatch"
PROJECT = DISPATCH.parent


def _classes(root: Path) -> dict[str, list[str]]:
    """Every class defined under ``root``: its name -> the names of its bases."""
    out: dict[str, list[str]] = {}
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                out[f"{path.relative_to(root)}:{node.name}"] = [ast.unparse(b) for b in node.bases]
    return out


def test_no_class_has_two_of_our_own_classes_as_bases() -> None:
    ours = {key.split(":")[1] for key in _classes(PROJECT)}
    for key, bases in _classes(DISPATCH).items():
        own = [b for b in bases if b.split(".")[-1].split("[")[0] in ours]
        assert len(own) < 2, f"{key} mixes {own}"


def test_the_dispatcher_has_no_mixins() -> None:
    assert _classes(DISPATCH)["_dispatcher.py:Dispatcher"] == []


def test_no_module_of_the_core_touches_redis_or_lua() -> None:
    for path in DISPATCH.glob("*.py"):
        text = path.read_text()
        tree = ast.parse(text)
        imported = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not any(m.split(".")[0] == "redis" for m in imported), path.name
        assert "redis.call" not in text, path.name


def test_each_state_has_its_own_module_and_every_move_lands_on_a_state() -> None:
    files = {path.stem for path in (DISPATCH / "policies" / "auto").glob("_*.py")}
    for name, state in STATES.items():
        assert state.name == name and f"_{name}" in files
    assert set(_state.TRANSITIONS) == set(STATES)
    for moves in _state.TRANSITIONS.values():
        assert set(moves.values()) <= set(STATES)


def test_a_state_reached_only_by_slow_start_ending_is_left_only_by_reading_the_kind() -> None:
    """Fallback is where an unknown kind goes after a slot wait; it never goes back."""
    assert _state.next_state(_state.PROBING, _state.SLOT_WAIT) == _state.FALLBACK
    assert _state.PROBING not in _state.TRANSITIONS[_state.FALLBACK].values()
    assert all(_state.PROBING not in m.values() for m in _state.TRANSITIONS.values())
