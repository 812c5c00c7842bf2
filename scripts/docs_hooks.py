"""mkdocs hooks (mkdocs.yml): the README and the benchmark outputs join the site.

The README is the home page (``index.md``); its links into ``docs/`` are made relative
to the site.
The benchmark pages link to raw outputs beside the code (``benchmarks/results/``: reports
and figures) with paths that work when reading the repository,
``../../benchmarks/results/...`` from ``docs/benchmarks/``. Those files are outside
``docs/``, so they are added to the site under ``benchmarks/results/`` and the links that
reach them are rewritten to it; mkdocs then checks them like any other link.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

RESULTS = "benchmarks/results"
SUFFIXES = {".md", ".png", ".svg"}
LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)(\))")


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def on_files(files: Files, config: Any) -> Files:
    """Adds the README (as the home page) and the reports and figures of
    ``benchmarks/results/`` to the site."""
    root = _root(config)
    files.append(File.generated(config, "index.md", abs_src_path=str(root / "README.md")))
    for path in sorted((root / RESULTS).rglob("*")):
        if path.suffix in SUFFIXES and path.is_file():
            uri = path.relative_to(root).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Points links at ``<repository>/benchmarks/results/...`` to the site's copy."""
    docs = Path(config["docs_dir"]).resolve()
    page_dir = (docs / page.file.src_uri).parent
    root = _root(config)

    def fix(match: re.Match[str]) -> str:
        target = match["target"]
        if "://" in target or target.startswith("#"):
            return match[0]
        if page.file.src_uri == "index.md" and target.startswith("docs/"):
            return f"{match[1]}{target.removeprefix('docs/')}{match[3]}"
        full = Path(posixpath.normpath(page_dir / target))
        if not full.is_relative_to(root / RESULTS):
            return match[0]
        site_target = docs / full.relative_to(root)
        return f"{match[1]}{posixpath.relpath(site_target, page_dir)}{match[3]}"

    return LINK.sub(fix, markdown)
