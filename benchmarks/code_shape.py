"""The shape of the package at a git revision: file and function lengths, private names
imported across subpackages, benchmark scripts (issue #20's before/after, docs/design.md).

    python benchmarks/code_shape.py REV [REV ...]

Each revision is read from git (``git archive``), so the working tree is not touched. A
*part* is a top-level subpackage or module of ``gpautotune`` (as in
tests/test_layering.py); a *private import across parts* is a ``from gpautotune.X...
import name`` in another part where ``name`` or a module on the path starts with ``_``
(``__init__`` aside), counted once per importing module and name.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tarfile
from pathlib import PurePosixPath

import numpy as np
import pandas as pd


def _sources(rev: str) -> dict[str, str]:
    """``path -> text`` of the Python files under gpautotune/ and benchmarks/ at ``rev``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "gpautotune", "benchmarks"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return {
            m.name: tar.extractfile(m).read().decode()
            for m in tar.getmembers()
            if m.isfile() and m.name.endswith(".py")
        }


def _part(path: str) -> str:
    parts = PurePosixPath(path).with_suffix("").parts
    return parts[1] if len(parts) > 2 or parts[-1] != "__init__" else "__init__"


def _private(module: str, names: list[str]) -> list[str]:
    hidden_path = any(p.startswith("_") and not p.startswith("__") for p in module.split("."))
    return [n for n in names if hidden_path or (n.startswith("_") and not n.startswith("__"))]


def shape(rev: str) -> dict[str, float]:
    """The figures of one revision."""
    files = _sources(rev)
    package = {p: t for p, t in files.items() if p.startswith("gpautotune/")}
    lengths, functions, private = [], [], set()
    for path, text in package.items():
        lengths.append(len(text.splitlines()))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(node.end_lineno - node.lineno + 1)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                target = node.module.split(".")
                if target[0] != "gpautotune" or len(target) < 2 or target[1] == _part(path):
                    continue
                for name in _private(node.module, [a.name for a in node.names]):
                    private.add((path, node.module, name))
    scripts = [p for p in files if p.startswith("benchmarks/") and p.count("/") == 1]
    return {
        "package files": len(lengths),
        "file lines, median": float(np.median(lengths)),
        "files over 500 lines": sum(n > 500 for n in lengths),
        "functions": len(functions),
        "function lines, median": float(np.median(functions)),
        "function lines, 90th percentile": float(np.percentile(functions, 90)),
        "functions over 40 lines": sum(n > 40 for n in functions),
        "private names imported across parts": len(private),
        "benchmark scripts": len(scripts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+", help="git revisions (commits, branches, tags)")
    args = parser.parse_args()
    table = pd.DataFrame({rev: shape(rev) for rev in args.revs})
    print("| | " + " | ".join(table.columns) + " |")
    print("|---" * (len(table.columns) + 1) + "|")
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(f"{v:g}" for v in row) + " |")


if __name__ == "__main__":
    main()
