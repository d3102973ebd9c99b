"""The front-end package's layout (docs/architecture.md, "Front ends"): no import cycles
among its modules, counting imports inside functions, and the language-neutral modules
import no framework."""

from __future__ import annotations

import ast
from pathlib import Path

FRONTEND = Path(__file__).resolve().parents[2] / "python" / "solar" / "frontend"
NEUTRAL = ["builder", "ops", "problem", "sizes", "validation", "values"]


def _module(path: Path) -> str:
    rel = path.relative_to(FRONTEND).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts) or "__init__"


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(front-end modules, top-level packages) imported anywhere in the file."""
    me = _module(path).split(".")
    package = me[:-1] if path.name != "__init__.py" else me
    local, external = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            external |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                external.add((node.module or "").split(".")[0])
                continue
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            if node.level - 1 > len(package):
                continue  # above solar.frontend: solar itself
            target = [*base, *(node.module.split(".") if node.module else [])]
            for alias in node.names:
                for candidate in (target + [alias.name], target):
                    name = ".".join(candidate)
                    f = FRONTEND.joinpath(*candidate)
                    if f.with_suffix(".py").exists() or (f / "__init__.py").exists():
                        local.add(name)
                        break
    return local, external


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in FRONTEND.rglob("*.py"):
        if "stdlib" in path.parts:
            continue
        graph[_module(path)] = _imports(path)[0] - {_module(path)}
    return graph


def test_no_import_cycles_in_the_front_ends():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt in graph and not state.get(nxt):
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    assert not cycles, cycles


def test_the_neutral_modules_import_no_framework():
    for name in NEUTRAL:
        _, external = _imports(FRONTEND / f"{name}.py")
        assert not external & {"torch", "jax", "flax"}, (name, external)


def test_the_graph_sees_lazy_imports():
    # lower.py imports the rules and the PyTorch capture: the walk must find both.
    assert {"rules", "capture", "builder"} <= _graph()["lower"]


def test_the_jax_rules_use_no_private_helper_of_the_pytorch_rules():
    # The helpers both languages need are public functions of the neutral ops.py; the JAX
    # rules reach into the PyTorch rules module for none of its private names (issue 45).
    private = []
    for path in sorted((FRONTEND / "jax").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "T"
                and node.attr.startswith("_")
            ):
                private.append(f"{path.name}:{node.lineno}: T.{node.attr}")
    assert private == []
