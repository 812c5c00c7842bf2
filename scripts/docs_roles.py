"""A griffe extension for the API reference (mkdocs.yml): Sphinx roles become links.

The package's docstrings cross-reference with Sphinx roles (``:class:`Space```,
``:func:`~gpautotune.analysis.holm```). Markdown has no roles, so each one is replaced by
an optional autoref: a link where the named object is documented, plain code where it
is not (an optional reference never fails the strict build).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|mod|data|exc|obj):`(?P<tilde>~?)(?P<target>[^`]+)`")


def _identifier(obj: griffe.Object, target: str) -> str:
    """The full path of ``target`` as named in ``obj``'s docstring (itself if unknown)."""
    if target.startswith("gpautotune."):
        return target
    head, _, rest = target.partition(".")
    try:
        resolved = obj.resolve(head)
    except (griffe.NameResolutionError, KeyError, AttributeError):
        return target
    return f"{resolved}.{rest}" if rest else resolved


def _replace(obj: griffe.Object, text: str) -> str:
    def link(match: re.Match[str]) -> str:
        target = match["target"].strip().rstrip("()")
        title = target.rsplit(".", 1)[-1] if match["tilde"] else target
        identifier = _identifier(obj, target)
        return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'

    return ROLE.sub(link, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles of every docstring once the package is loaded."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and not obj.is_alias:
            obj.docstring.value = _replace(obj, obj.docstring.value)
