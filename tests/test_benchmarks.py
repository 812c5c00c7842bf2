"""The shipped YAML files and the benchmark scripts.

Every YAML file under ``configs/`` and ``benchmarks/`` is a valid comparison (checked by
the comparison loader, options of every problem and strategy included) or a valid tuning
file; the benchmark scripts stand alone (no imports of ``tests`` or of another script)
and run their repetitions through the package (no process pool of their own); the
private names they reach are still the package's; each script answers ``--help``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpautotune.comparison import load_comparison
from gpautotune.config import check_problem, check_strategy, load_config

ROOT = Path(__file__).resolve().parents[1]
YAMLS = sorted([*ROOT.glob("configs/**/*.yaml"), *ROOT.glob("benchmarks/*.yaml")])
SCRIPTS = sorted(ROOT.glob("benchmarks/*.py"))
#: Modules a script must not import: its own process pools (the comparison harness and
#: ``gpautotune.parallel.dask_client`` run repetitions and evaluations).
POOLS = {"concurrent.futures", "multiprocessing"}


def _imports(path: Path) -> set[str]:
    """Every module a script imports (at any depth, relative imports as written)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_shipped_files_are_found():
    assert len(YAMLS) >= 20 and len(SCRIPTS) >= 10
    assert ROOT / "benchmarks" / "gpr-laplacian.yaml" in YAMLS


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_yaml_file_loads(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    if "strategies" in data:
        config = load_comparison(path, allow_imports=True)
        assert config.strategies and all(config.repetitions_of(e) >= 1 for e in config.strategies)
    else:
        config = load_config(path)
        check_problem(config.problem, allow_imports=True)
        check_strategy(config.strategy)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_scripts_import_neither_tests_nor_each_other_nor_a_pool(path: Path) -> None:
    imported = _imports(path)
    scripts = {p.stem for p in SCRIPTS}
    assert not {m for m in imported if m == "tests" or m.startswith("tests.")}
    assert not {m.split(".")[0] for m in imported} & scripts
    assert not {m for m in imported if m.split(".")[0] in {p.split(".")[0] for p in POOLS}}


def test_the_import_check_sees_what_it_forbids(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "import os\ndef f():\n    from tests.analysis import x\n"
        "    from concurrent.futures import ProcessPoolExecutor\n"
    )
    assert {"os", "tests.analysis", "concurrent.futures"} <= _imports(script)


def _defined(paths) -> set[str]:
    """Every name the files at ``paths`` define or bind: functions, classes, assigned
    names and attributes (``self.x = ...``), annotated fields and import aliases."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
    return names


def _private_reaches(path: Path, package: set[str]) -> set[str]:
    """The private attributes (``x._name``) the script at ``path`` reads that neither it
    nor the ``package`` names define."""
    reached = {
        node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    }
    return reached - package - _defined([path])


PACKAGE = sorted((ROOT / "gpautotune").rglob("*.py"))


def test_scripts_reach_only_private_names_the_package_still_defines() -> None:
    """A script that reads a private attribute of the package (a strategy's method, a
    problem's table) breaks silently when the package moves it, since no test runs the
    scripts' measurements: each such name must still be defined in the package."""
    package = _defined(PACKAGE)
    assert {p.name: _private_reaches(p, package) for p in SCRIPTS} == {
        p.name: set() for p in SCRIPTS
    }


def test_the_private_name_check_sees_a_moved_method(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "def f(s):\n    s._gone_row(1)\n    s._mine = 2\n    return s._mine, s._tensors\n"
    )
    assert _private_reaches(script, _defined(PACKAGE)) == {"_gone_row"}


@pytest.mark.slow
def test_every_script_answers_help() -> None:
    """Each script parses its arguments before any measurement (a broken import or
    parser shows here); run from the repository root, as the docs' commands are."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    running = {
        path.name: subprocess.Popen(
            [sys.executable, str(path), "--help"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in SCRIPTS
    }
    failed = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=300)
        if process.returncode != 0 or "usage" not in out.lower():
            failed[name] = err.strip().splitlines()[-1:]
    assert not failed
