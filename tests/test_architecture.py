"""The shape of the package, checked from its source (ast, nothing imported): no import cycle, layers
import only downward, the library never imports the CLI's toolkits, and big modules say why.

Layers, bottom to top (a module may import its own layer and any below; every import counts,
including lazy ones inside functions and those under TYPE_CHECKING):

  0  kafkatool, jvm, release, sizes, config   pure helpers that import nothing else of kafkatool
  1  log        Kafka's on-disk formats
  2  slices     raw segments on any storage, sliced and read (both spark-scan engines)
  3  cluster    ZooKeeper / Admin API backends and planners
  4  ops        offline operations (may use cluster: offsets reports read live groups)
  5  spark      the PySpark engine of spark-scan
  6  cli        typer + rich: parse options, call the library, render
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kafkatool"
LAYERS: list[tuple[str, ...]] = [
    ("kafkatool", "kafkatool.jvm", "kafkatool.release", "kafkatool.sizes", "kafkatool.config"),
    ("kafkatool.log",),
    ("kafkatool.slices",),
    ("kafkatool.cluster",),
    ("kafkatool.ops",),
    ("kafkatool.spark",),
    ("kafkatool.cli", "kafkatool.__main__"),
]
UI_TOOLKITS = ("typer", "rich", "click")
MAX_LINES = 700
SIZE_REASON = "Size:"  # a module over MAX_LINES says why in a docstring paragraph starting so
# Modules over MAX_LINES that other work in flight is changing (issue 13 leaves them to after it lands);
# each with why it is long today.  Nothing else may grow past MAX_LINES without a "Size:" paragraph.
PENDING_SPLITS: dict[str, str] = {}  # none left: every long module says why in its docstring


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every absolute module name `name` imports (relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                out.add(sub if sub in MODULES else module)
    return out


def _internal(target: str) -> str | None:
    """The kafkatool module an imported name lives in (None for third-party and stdlib)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


GRAPH: dict[str, set[str]] = {
    name: {m for t in _imports(name, path) if (m := _internal(t)) and m != name} for name, path in MODULES.items()
}


def _layer(module: str) -> int:
    best = (-1, -1)  # (length of the longest matching prefix, layer)
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best[0]:
                best = (len(p), i)
    assert best[1] >= 0, f"{module} is in no layer: add it to LAYERS"
    return best[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), plus self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    assert {"kafkatool.log.records", "kafkatool.ops.compact", "kafkatool.cli.main"} <= set(MODULES)
    assert "kafkatool.log.records" in GRAPH["kafkatool.log.segment"]
    assert "kafkatool.cluster.zk" in GRAPH["kafkatool.cluster.open"]  # a lazy import inside a function counts


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_cycle_finder_finds_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_layers_import_only_downward() -> None:
    upward = sorted(
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
        for a, targets in GRAPH.items()
        for b in targets
        if _layer(b) > _layer(a)
    )
    assert upward == []


def test_the_library_never_imports_typer_or_rich() -> None:
    offenders = defaultdict(set)
    for name, path in MODULES.items():
        if _layer(name) == len(LAYERS) - 1:
            continue
        for target in _imports(name, path):
            if target.split(".")[0] in UI_TOOLKITS:
                offenders[name].add(target)
    assert dict(offenders) == {}


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


@pytest.mark.parametrize("name", sorted(MODULES))
def test_big_modules_say_why(name: str) -> None:
    path = MODULES[name]
    if _lines(path) <= MAX_LINES or name in PENDING_SPLITS:
        return
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert any(line.startswith(SIZE_REASON) for line in doc.splitlines()), (
        f"{name}: {_lines(path)} lines; split it, or say why it is one unit in a docstring paragraph "
        f"starting {SIZE_REASON!r}"
    )


def test_pending_splits_are_real_modules() -> None:
    assert set(PENDING_SPLITS) <= set(MODULES)
