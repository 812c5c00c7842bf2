"""The Python snippets of README.md (each on its own), of docs/own-function.md and
docs/sensitivity.md (one after the other, as a reader follows the page) and of
docs/parallel.md (as the worker processes of a local cluster import them) run as
written, from a scratch folder.

A comment ``<!-- readme-test: NAME=N ... -->`` on the line before a snippet makes this
test replace every ``NAME=<number>`` of that snippet with ``NAME=N`` (``budget=12``, and
for the sensitivity indices ``n=64 paths=4``: fast runs of snippets whose sizes are
realistic); ``<!-- readme-test: skip (why) -->`` leaves out a snippet that needs what a
test does not have (a running Dask scheduler). Every snippet, skipped ones included,
must define the names it uses: a reader copies one block at a time.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<marker>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.S
)
SETTING = re.compile(r"(\w+)=(\d+)")


class Snippet(NamedTuple):
    first: str  # its first line (the test's name for it)
    code: str  # as a test runs it (the marker's substitutions made)
    skip: str | None  # why a test does not run it


def snippets(path: Path, *, skipped: bool = False) -> list[Snippet]:
    """The Python blocks of a page, with the markers' substitutions made (and those
    marked ``skip`` only when ``skipped``)."""
    out = []
    for match in BLOCK.finditer(path.read_text()):
        code, marker = match["code"], (match["marker"] or "").strip()
        skip = None
        if marker.startswith("skip"):
            skip = marker.removeprefix("skip").strip(" ()") or "skip"
        if skip is None and marker:
            settings = SETTING.findall(marker)
            if SETTING.sub("", marker).strip() or not settings:
                raise ValueError(f"unknown readme-test marker {marker!r}")
            for name, value in settings:
                code = re.sub(rf"\b{name}=\d+", f"{name}={value}", code)
        if skip is None or skipped:
            out.append(Snippet(code.strip().splitlines()[0], code, skip))
    return out


SNIPPETS = snippets(ROOT / "README.md")
TUTORIAL = snippets(ROOT / "docs" / "own-function.md")
SENSITIVITY = snippets(ROOT / "docs" / "sensitivity.md")
PARALLEL = snippets(ROOT / "docs" / "parallel.md")
#: Pages whose blocks stand alone (own-function.md's build on each other, as a tutorial).
PAGES = ["README.md", "docs/sensitivity.md", "docs/parallel.md"]


def test_the_readme_has_its_snippets():
    assert len(SNIPPETS) >= 5
    assert len(SENSITIVITY) == 2 and len(PARALLEL) == 1
    assert len(snippets(ROOT / "docs" / "parallel.md", skipped=True)) == 2


def test_markers_set_sizes_and_skip_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- readme-test: budget=3 n=8 -->\n```python\nf(budget=30, n=1024, nn=5)\n```\n"
        "<!-- readme-test: skip (needs a cluster) -->\n```python\ng()\n```\n"
    )
    (first,) = snippets(page)
    assert first.code == "f(budget=3, n=8, nn=5)\n"
    assert [s.skip for s in snippets(page, skipped=True)] == [None, "needs a cluster"]
    page.write_text("<!-- readme-test: quick -->\n```python\nf()\n```\n")
    with pytest.raises(ValueError, match="unknown readme-test marker"):
        snippets(page)


def undefined_names(code: str) -> list[str]:
    """The names a snippet reads but neither binds (assigns, imports, defines, takes as
    arguments) nor gets from Python's builtins: a block that needs an earlier one's."""
    tree = ast.parse(code)
    bound, read = set(dir(builtins)), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.append(node.id)
        elif isinstance(node, ast.Name):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return sorted(set(read) - bound)


@pytest.mark.parametrize("page", PAGES)
def test_every_snippet_defines_the_names_it_uses(page):
    for snippet in snippets(ROOT / page, skipped=True):
        assert undefined_names(snippet.code) == [], f"{page}: {snippet.first}"


def test_a_snippet_that_uses_an_earlier_ones_names_is_found():
    assert undefined_names("rich.print(x)\n") == ["rich", "x"]
    assert (
        undefined_names("import rich\ndef f(a):\n    return [b for b in a]\nrich.print(f)\n") == []
    )


@pytest.mark.parametrize(
    ("first", "code", "_skip"), SNIPPETS, ids=[f"{i}" for i in range(len(SNIPPETS))]
)
def test_snippet_runs(first, code, _skip, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md ({first})", "exec"), {"__name__": "__readme__"})


@pytest.mark.slow
def test_the_tutorial_runs_from_top_to_bottom(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__tutorial__"}
    for first, code, _ in TUTORIAL:
        exec(compile(code, f"own-function.md ({first})", "exec"), namespace)
    assert "already exists" in capsys.readouterr().out  # load_if_exists=False refused
    assert namespace["run"].finished and namespace["result"].best is not None


@pytest.mark.slow
def test_the_sensitivity_page_runs_from_top_to_bottom(tmp_path, monkeypatch, capsys):
    """Each block in a namespace of its own (a reader may run the second alone, on the
    journal the first made), one after the other in one folder."""
    monkeypatch.chdir(tmp_path)
    spaces = []
    for first, code, _ in SENSITIVITY:
        spaces.append({"__name__": "__sensitivity__"})
        exec(compile(code, f"sensitivity.md ({first})", "exec"), spaces[-1])
    assert list(spaces[0]["result"].table["parameter"]) == ["a", "b", "c"]
    assert spaces[1]["table"].attrs["run_id"] == 1 and spaces[1]["png"].is_file()
    assert "run 1" in capsys.readouterr().out


def test_the_parallel_page_imports_as_its_workers_do(tmp_path, monkeypatch):
    """A local cluster's worker processes import the script (as ``__mp_main__``): the
    snippet must then only define things, not tune nor reach for a cluster."""
    monkeypatch.chdir(tmp_path)
    for first, code, _ in PARALLEL:
        namespace = {"__name__": "__mp_main__"}
        exec(compile(code, f"parallel.md ({first})", "exec"), namespace)
        assert "result" not in namespace and not list(tmp_path.iterdir()), first
