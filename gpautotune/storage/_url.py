"""Where a journal lives: a file path, or an SQLAlchemy-style ``sqlite:///`` URL.

Optuna users write storages as URLs; the journal accepts the SQLite ones, as SQLAlchemy
reads them, and refuses every other kind with a message (never a folder named
``sqlite:`` or ``file:`` created on the way):

* ``results/runs.db`` or ``sqlite:///results/runs.db`` — a file, relative to the
  current folder; ``sqlite:////abs/runs.db`` — an absolute one;
* ``:memory:``, ``sqlite://`` or ``sqlite:///:memory:`` — in memory (lost at exit);
* ``postgresql://...``, ``mysql://...``, SQLite URI filenames (``file:runs.db?mode=ro``)
  and URLs with a query — refused.
"""

from __future__ import annotations

import os
import re

from gpautotune.exceptions import StorageError

__all__ = ["journal_path", "MEMORY"]

MEMORY = ":memory:"
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):(?P<rest>.*)$", re.S)


def journal_path(storage: str | os.PathLike[str]) -> str:
    """The file path (or ``:memory:``) a storage string names.

    Raises:
        StorageError: an empty string, a URL of another database, an SQLite URI
            filename or a URL with a query string (the message says what to give).
    """
    text = os.fspath(storage)
    if not isinstance(text, str) or not text.strip():
        raise StorageError("the journal path is empty; give a file path or sqlite:///PATH")
    match = _SCHEME.match(text)
    if match is None:  # a plain path (a one-letter "scheme" is a Windows drive)
        return text
    scheme, rest = match["scheme"].lower(), match["rest"]
    if scheme == "sqlite":
        return _sqlite_url(text, rest)
    if scheme == "file":
        raise StorageError(
            f"{text!r} is an SQLite URI filename, which the journal does not take: give "
            "a path or sqlite:///PATH (reports and exports open journals read-only "
            "themselves)"
        )
    if rest.startswith("//"):
        raise StorageError(
            f"{text!r}: the journal is an SQLite file; {scheme}:// storages are not "
            "supported (give a path or sqlite:///PATH)"
        )
    return text  # "name:with-colon.db": a relative path whose first part has a colon


def _sqlite_url(text: str, rest: str) -> str:
    if rest in ("//", "///:memory:"):
        return MEMORY
    if not rest.startswith("///") or len(rest) == 3:
        raise StorageError(
            f"{text!r} is not an SQLite URL: write sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db (three slashes, then the path)"
        )
    if "?" in rest:
        raise StorageError(
            f"{text!r}: URL options (after '?') are not supported; give the path only"
        )
    return rest[3:]
