"""The package's shape: imports point down the layers only, with no cycle, and
``import fairstream`` stays light (no server, CLI, rich or click of its own)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "fairstream"

# lower number = lower layer; a module may import its own layer and the ones below
LAYERS: list[tuple[str, int]] = [
    # the trace model: trace, recorder and sinks, log line, stats, errors, attribution
    (
        r"fairstream\.(_trace|_errors|_attribution|_version|_stats|_logline|_recorder"
        r"|_builder|_otel|_spans)$",
        0,
    ),
    (r"fairstream\._instrument(\..*)?$", 1),
    (r"fairstream\._detect(\..*)?$", 2),
    (r"fairstream\._dispatch(\..*)?$", 3),
    (r"fairstream\.(sim|_replay(\..*)?)$", 4),
    (r"fairstream\.(_cli(\..*)?|__main__)$", 5),
    (r"fairstream$", 6),  # the package's __init__: re-exports (server and sim lazily)
]
SERVER = re.compile(r"fairstream\.server(\..*)?$")
MAY_IMPORT_SERVER = re.compile(r"fairstream(\.sim|\._cli(\..*)?|\._replay(\..*)?)?$")


def layer(module: str) -> int:
    for pattern, n in LAYERS:
        if re.match(pattern, module):
            return n
    raise AssertionError(f"{module} has no layer: add it to LAYERS")


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


def edges() -> dict[str, set[str]]:
    """module -> fairstream modules it imports (anywhere in it, but TYPE_CHECKING blocks)."""
    modules = {module_name(p): p for p in PKG.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_lines(tree)
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


def test_imports_point_down_the_layers_only() -> None:
    upward = []
    for mod, targets in edges().items():
        for t in targets:
            if mod.startswith(t + "."):  # a package's own __init__, run by Python anyway
                continue
            if SERVER.match(mod):
                if not SERVER.match(t) and t != "fairstream._errors":
                    upward.append(f"{mod} -> {t} (the server imports itself and the errors)")
            elif SERVER.match(t):
                if not MAY_IMPORT_SERVER.match(mod):
                    upward.append(
                        f"{mod} -> {t} (only the CLI, the simulator and the replay use the server)"
                    )
            elif layer(t) > layer(mod):
                upward.append(f"{mod} (layer {layer(mod)}) -> {t} (layer {layer(t)})")
    assert not upward, "\n".join(sorted(upward))


def test_no_import_cycles() -> None:
    graph = edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:  # Tarjan's strongly connected components
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
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            strongconnect(v)
    assert not cycles, cycles


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
