"""The import graph of the package: every module imports, and the parts are layered.

Each top-level part of the package (a subpackage or a top-level module) has a layer; a
module may import from its own part or from parts of lower layers only, so there is no
cycle between parts. Imports inside functions count (they run); imports under
``if TYPE_CHECKING:`` do not (annotations only).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import gpautotune

ROOT = Path(gpautotune.__file__).parent

#: Lowest layer first; parts of one layer do not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("exceptions", "measurement", "progress", "version"),  # core types, progress bars (Rich)
    ("space",),
    ("surrogate", "trial", "execution"),  # execution: the evaluator boundary
    ("acquisition", "sensitivity", "storage"),
    ("problems",),
    ("strategies",),
    ("parallel",),  # the asynchronous loop and its Dask workers (below the tuner)
    ("tuner",),
    (
        "config",
        "quantization",
        "kernel",
        "catalog",
    ),  # the API layer: building runs from files, library entries, the registries listed
    ("comparison",),  # comparison files and their Dask orchestration
    ("analysis",),  # reports and explanations of stored runs
    ("cli", "__init__"),
    ("__main__",),
]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _modules() -> list[str]:
    names = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        names.append(".".join(parts))
    return names


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> set[str]:
    """The gpautotune modules ``module`` imports at run time."""
    path = ROOT.parent / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m == "gpautotune" or m.startswith("gpautotune.")}


MODULES = _modules()


def test_every_part_has_a_layer() -> None:
    missing = sorted({_part(m) for m in MODULES} - set(RANK))
    assert not missing, f"give these parts a layer in LAYERS: {missing}"


@pytest.mark.parametrize("module", [m for m in MODULES if m != "gpautotune.__main__"])
def test_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_parts_import_only_lower_layers() -> None:
    wrong = [
        f"{module} imports {target} ({_part(module)} must not depend on {_part(target)})"
        for module in MODULES
        for target in sorted(_imports(module))
        if _part(target) != _part(module) and RANK[_part(target)] >= RANK[_part(module)]
    ]
    assert not wrong, "\n".join(wrong)


def test_no_cycle_between_parts() -> None:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        edges = graph.setdefault(_part(module), set())
        edges.update(_part(t) for t in _imports(module) if _part(t) != _part(module))
    state: dict[str, int] = {}

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := cycle_from(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = cycle_from(node, [])
            assert cycle is None, " -> ".join(cycle or [])


def test_the_layering_is_the_documented_one() -> None:
    order = ["space", "problems", "strategies", "tuner", "cli"]
    assert [RANK[p] for p in order] == sorted(RANK[p] for p in order)
    assert RANK["trial"] < RANK["strategies"] and RANK["measurement"] < RANK["problems"]
    assert RANK["execution"] < RANK["problems"]  # evaluators stay below the problems


def _private_imports(module: str) -> list[str]:
    """``from gpautotune.X... import name`` of another part, where ``name`` or a module on
    the path is private (``_name``)."""
    path = ROOT.parent / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
            continue
        if not node.module.startswith("gpautotune.") or _part(node.module) == _part(module):
            continue
        hidden = any(p.startswith("_") and not p.startswith("__") for p in node.module.split("."))
        found += [
            f"{module} imports {node.module}.{a.name}"
            for a in node.names
            if hidden or (a.name.startswith("_") and not a.name.startswith("__"))
        ]
    return found


def test_no_private_names_imported_across_parts() -> None:
    wrong = [line for module in MODULES for line in _private_imports(module)]
    assert not wrong, "import these from their part's public module:\n" + "\n".join(wrong)
