"""The Python snippets of README.md (each on its own) and of docs/own-function.md (one
after the other, as a reader follows the page) run as written, from a scratch folder.

A comment ``<!-- readme-test: budget=N -->`` on the line before a snippet makes this
test replace every ``budget=<number>`` of that snippet with ``budget=N`` (fast runs of
snippets whose budgets are realistic).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<marker>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.S
)


def snippets(path: Path) -> list[tuple[str, str]]:
    """(first line, code) of each Python block, with the marker's substitutions made."""
    out = []
    for match in BLOCK.finditer(path.read_text()):
        code, marker = match["code"], match["marker"] or ""
        budget = re.fullmatch(r"\s*budget=(\d+)\s*", marker)
        if marker and budget is None:
            raise ValueError(f"unknown readme-test marker {marker!r}")
        if budget:
            code = re.sub(r"\bbudget=\d+", f"budget={budget[1]}", code)
        out.append((code.strip().splitlines()[0], code))
    return out


SNIPPETS = snippets(ROOT / "README.md")
TUTORIAL = snippets(ROOT / "docs" / "own-function.md")


def test_the_readme_has_its_snippets():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize(("first", "code"), SNIPPETS, ids=[f"{i}" for i in range(len(SNIPPETS))])
def test_snippet_runs(first, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md ({first})", "exec"), {"__name__": "__readme__"})


@pytest.mark.slow
def test_the_tutorial_runs_from_top_to_bottom(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__tutorial__"}
    for first, code in TUTORIAL:
        exec(compile(code, f"own-function.md ({first})", "exec"), namespace)
    assert "already exists" in capsys.readouterr().out  # load_if_exists=False refused
    assert namespace["run"].finished and namespace["result"].best is not None
