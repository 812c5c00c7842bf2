"""The package metadata as an installer sees it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import gpautotune

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_torch_is_not_pinned_exactly():
    torch = [d for d in PROJECT["dependencies"] if re.match(r"torch\b", d)]
    assert torch and not any("==" in d for d in torch), torch


def test_every_extra_a_message_recommends_exists():
    extras = set(PROJECT["optional-dependencies"])
    named = set()
    for path in Path(gpautotune.__file__).parent.rglob("*.py"):
        named |= set(re.findall(r"gpautotune\[(\w+)\]", path.read_text()))
    assert named <= extras, f"messages recommend missing extras: {sorted(named - extras)}"


def test_the_version_is_the_packages():
    text = (ROOT / "gpautotune" / "version.py").read_text()
    assert f'"{gpautotune.__version__}"' in text and "version" in PROJECT["dynamic"]
