"""The modules of python/solar import one another without cycles (issue 15).

The test reads every module's source (nothing is imported) and collects each import of
another solar module, at module level and inside functions alike: a cycle broken only by
moving an import into a function is still a cycle here. Importing an ancestor package's own
names (`from . import _core`, `from .. import check`) is not an edge: Python initialises a
package before any of its submodules, so that import can never start a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "solar"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imported(module: str, is_package: bool, node, modules) -> set[str]:
    """The solar modules one import statement of `module` names."""
    names = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif node.level:  # from .x import y
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
        names = [f"{target}.{a.name}" for a in node.names]
    elif node.module:
        names = [f"{node.module}.{a.name}" for a in node.names]
    out = set()
    for name in names:
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]  # `from .m import f`: the module m
        is_ancestor = module == name or module.startswith(name + ".")
        if name in modules and name.startswith("solar") and not is_ancestor:
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _imported(name, path.name == "__init__.py", node, modules)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and modules that
    import themselves."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
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
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycles():
    graph = import_graph()
    # The walk sees the package: the CLI imports the batch runner, which imports the workers.
    assert "solar.workers" in graph["solar.batch"]
    assert "solar.batch" in graph["solar.cli"]
    assert cycles(graph) == []


def test_the_walk_finds_a_cycle_through_a_function_level_import():
    # Two modules that import each other, one of them inside a function: one cycle.
    graph = {"solar.a": {"solar.b"}, "solar.b": {"solar.a"}, "solar.c": {"solar.a"}}
    assert cycles(graph) == [["solar.a", "solar.b"]]
    tree = ast.parse("def f():\n    from .b import g\n")
    modules = {"solar.a": None, "solar.b": None}
    edges = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            edges |= _imported("solar.a", False, node, modules)
    assert edges == {"solar.b"}


def names_taken_from_the_package(module: str, is_package: bool, node, modules) -> list[str]:
    """The names one import statement of `module` takes from the `solar` package itself
    (`from . import load_arch` in solar/cli.py, `from .. import check`, `from solar import
    trace`), not from one of its modules."""
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target != "solar":
        return []
    # `_core` is the compiled extension, a module without a .py file.
    return [a.name for a in node.names if f"solar.{a.name}" not in modules and a.name != "_core"]


def test_nothing_inside_the_package_imports_from_its_init():
    # The package's own entry points that its modules need (load_arch, dim_overrides, check,
    # trace, the version) live in solar/api.py; solar/__init__.py only re-exports them and
    # the front ends. A module that took a name from the package itself would depend on
    # everything __init__ imports (issue 45).
    modules = _modules()
    taken = []
    for name, path in modules.items():
        if name == "solar":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for imported in names_taken_from_the_package(
                name, path.name == "__init__.py", node, modules
            ):
                taken.append(f"{name}: {imported}")
    assert taken == []


def test_a_name_taken_from_the_package_is_found():
    modules = {"solar": None, "solar.cli": None, "solar.api": None, "solar.frontend": None}
    for source, module, is_package in (
        ("from . import load_arch, api", "solar.cli", False),
        ("from .. import load_arch", "solar.frontend.x", False),
        ("from solar import load_arch", "solar.cli", False),
    ):
        node = ast.parse(source).body[0]
        assert names_taken_from_the_package(module, is_package, node, modules) == ["load_arch"]
