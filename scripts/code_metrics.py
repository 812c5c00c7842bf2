"""Size and coupling figures of the package: file and function lengths, private imports.

A *private import across subpackages* is a name imported by a module of one top-level
part of the package (``space``, ``strategies``, ``tuner``, ...) from a module of another
part, where the name or a module on its path is private (starts with one underscore).
They are counted as import statements (an importing module and a source module) and as
names.

Usage::

    python scripts/code_metrics.py [--list] [PACKAGE_DIR]
"""

from __future__ import annotations

import argparse
import ast
import statistics
from collections.abc import Iterator
from pathlib import Path


def _part(module: str) -> str:
    """The top-level part of a dotted module name (``gpautotune.strategies.gpr`` -> strategies)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def private_imports(root: Path) -> Iterator[tuple[str, str, str]]:
    """``(importer, source module, name)`` of every private import across parts."""
    package = root.name
    for path in sorted(root.rglob("*.py")):
        importer = _module_name(root, path)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            source = node.module
            if not source.startswith(package + ".") or _part(source) == _part(importer):
                continue
            hidden = any(_private(p) for p in source.split("."))
            for alias in node.names:
                if hidden or _private(alias.name):
                    yield importer, source, alias.name


def function_lengths(root: Path) -> list[int]:
    """Lines of every function and method (decorators excluded, docstring included)."""
    out = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append(node.end_lineno - node.lineno + 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="gpautotune", help="the package folder")
    parser.add_argument("--list", action="store_true", help="list the private imports")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    files = [len(p.read_text().splitlines()) for p in root.rglob("*.py")]
    funcs = function_lengths(root)
    found = list(private_imports(root))
    print(f"files: {len(files)}, median {statistics.median(files):g} lines")
    print(f"functions: {len(funcs)}, median {statistics.median(funcs):g} lines")
    statements = len({(importer, source) for importer, source, _ in found})
    print(f"private imports across subpackages: {statements} statements, {len(found)} names")
    if args.list:
        for importer, source, name in found:
            print(f"  {importer}: from {source} import {name}")


if __name__ == "__main__":
    main()
