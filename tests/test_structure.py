"""The package's shape: imports point down the layers only (import-linter's contracts in
pyproject.toml), with no cycle in ``src`` or ``benchmarks``, and ``import fairstream`` stays
light (no server, CLI, rich or click of its own)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BENCHMARKS = ROOT / "benchmarks"
PKG = SRC / "fairstream"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (annotations only, never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def _lazy_targets(tree: ast.AST) -> set[str]:
    """Modules imported by name: ``import_module("...")`` calls and the ``_LAZY`` table."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module"):
            if node.args and isinstance(node.args[0], ast.Constant):
                found.add(str(node.args[0].value))
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets
        ):
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Tuple) and isinstance(sub.elts[0], ast.Constant):
                    found.add(str(sub.elts[0].value))
    return found


def edges(*, typing_too: bool = False) -> dict[str, set[str]]:
    """module -> fairstream modules it imports (anywhere in it; in TYPE_CHECKING blocks too
    with ``typing_too``)."""
    modules = {module_name(p): p for p in PKG.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = set() if typing_too else _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:  # ``from . import x`` imports the submodule x
                    sub = f"{target}.{alias.name}"
                    targets.add(sub if sub in modules else target)
        targets |= _lazy_targets(tree)
        out[mod] = {t for t in targets if t in modules and t != mod}
    return out


def benchmark_edges() -> dict[str, set[str]]:
    """benchmarks' modules -> the benchmark modules they import: the scripts import each
    other by name from their own directory, the matrix package relatively."""
    files = {p: "benchmarks." + ".".join(p.relative_to(BENCHMARKS).with_suffix("").parts)
             for p in BENCHMARKS.rglob("*.py")}  # fmt: skip
    names = {m.removesuffix(".__init__") for m in files.values()}
    out: dict[str, set[str]] = {}
    for path, mod in files.items():
        mod = mod.removesuffix(".__init__")
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {f"benchmarks.{a.name}" for a in node.names}
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                    targets.add(f"benchmarks.{target}")
                targets.add(target)
                targets |= {f"{target}.{a.name}" for a in node.names}
        out[mod] = {t for t in targets if t in names and t != mod and not mod.startswith(t + ".")}
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            strongconnect(v)
    return found


def test_cycles_finds_a_cycle() -> None:
    """The checker itself: a three-module circle is found, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycles() -> None:
    """No circle among the project's modules, in ``src`` or ``benchmarks``, counting imports
    made for type annotations too: a circle there is still two modules that need each other."""
    graph = {**edges(typing_too=True), **benchmark_edges()}
    assert not cycles(graph), cycles(graph)


def test_layer_contracts_hold() -> None:
    """import-linter's contracts in pyproject.toml: the layers, and the server standing alone."""
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout and " KEPT" in out.stdout, out.stdout


def test_every_module_has_a_layer() -> None:
    """A new top-level module or package is placed in the layers contract, not left out of it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    placed = {m.strip() for layer in layers for m in re.split(r"[|:]", layer)}
    top = {".".join(m.split(".")[:2]) for m in edges() if m != "fairstream"}
    assert top - placed <= {"fairstream.server"}, sorted(top - placed)


def test_one_attribution_context_variable() -> None:
    """The dispatcher's job reaches traces through one ContextVar, in the bottom layer."""
    made = []
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ContextVar"):
                made.append((module_name(path), ast.unparse(node.args[0])))
    assert sorted(made) == [
        ("fairstream._attribution", "'fairstream_job'"),
        ("fairstream._builder", "'fairstream_tags'"),  # labels from tag(), not attribution
    ]


_PROBE = """
import importlib.abc, sys, time
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('rich', 'click', 'h11', 'matplotlib'):
            raise ImportError(f'blocked: {name}')
        return None
sys.meta_path.insert(0, Block())
import fairstream
print(sorted(m for m in sys.modules if m.startswith(('fairstream.server', 'fairstream.sim',
      'fairstream._cli'))))
"""


def test_import_fairstream_needs_neither_rich_nor_click_nor_the_server() -> None:
    """httpx itself loads rich and click when they are installed (its CLI); ours must not."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_import_time_is_mostly_our_dependencies() -> None:
    """Our own modules' share of ``import fairstream`` (self time, -X importtime) is well
    under half: the rest is httpx, anyio, asyncio and tenacity, which we need anyway."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import fairstream"],
        capture_output=True,
        text=True,
        check=True,
    )
    ours = total = 0
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s+(\S+)", line)
        if m:
            total += int(m.group(1))
            if m.group(2).startswith("fairstream"):
                ours += int(m.group(1))
    assert total > 0
    assert ours / total < 0.5, (ours, total)
