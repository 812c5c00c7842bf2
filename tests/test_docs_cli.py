"""Every `gpautotune COMMAND --option` the docs show exists on the command line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from gpautotune.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CALL = re.compile(r"gpautotune ((?:spapt )?[a-z][a-z-]*)((?:[ \t]+[^\s`|#]+)*)")


def _options() -> dict[str, set[str]]:
    root = typer.main.get_command(app)
    out: dict[str, set[str]] = {}

    def visit(group, prefix: str) -> None:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                visit(command, f"{prefix}{name} ")
                continue
            opts = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            out[f"{prefix}{name}"] = opts | {"-h", "--help"}

    visit(root, "")
    return out


OPTIONS = _options()


def _code(path: Path) -> list[str]:
    """The lines of fenced code blocks and the inline code spans of a Markdown file."""
    lines, fenced = [], False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            lines.append(line.strip())
        else:
            lines += re.findall(r"`([^`]+)`", line)
    return lines


def _calls(path: Path) -> list[tuple[str, str, str]]:
    found = []
    for line in _code(path):
        for match in CALL.finditer(line):
            command = match[1]
            for option in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", match[2] or ""):
                found.append((path.name, command, option))
    return found


CALLS = [c for path in DOCS for c in _calls(path) if c[1] in OPTIONS]


def test_the_docs_show_commands_with_options():
    assert len(CALLS) > 10 and {c[1] for c in CALLS} >= {"tune", "compare", "export"}


@pytest.mark.parametrize(("doc", "command", "option"), CALLS)
def test_documented_options_exist(doc, command, option):
    assert option in OPTIONS[command], f"{doc}: gpautotune {command} has no {option}"


def test_documented_commands_exist():
    named = set()
    for path in DOCS:
        for line in _code(path):
            match = CALL.match(line)
            if match:
                named.add(match[1].split(" ")[0])
    assert named <= {c.split(" ")[0] for c in OPTIONS} | {"spapt"}, named
