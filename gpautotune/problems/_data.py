"""Where the seeds' public data lives, and how users point elsewhere.

The seeds' measured tables are public data (``phrb/dopt_anova_experiments``) and are not
shipped with the package. A data file named relative to the data folder (such as
``laplacian-k40c/search_space.csv``) is looked for, in this order, in:

1. every folder of ``$GPAUTOTUNE_DATA`` (folders separated by ``:``, ``;`` on Windows);
2. ``shared/data/`` in the current folder and in each of its parents (a checkout beside
   ``shared/``, run from anywhere inside it);
3. ``shared/data/`` beside the package's own folders (an editable install);
4. the user's data folder, ``$XDG_DATA_HOME/gpautotune`` (default
   ``~/.local/share/gpautotune``).

An explicit path (``data:`` in a tuning file, ``--set problem.data=PATH`` on the command
line, ``data=`` in Python; ``path:`` for ``kt-cache``) is used as given, as is an absolute
path (a relative one written in a YAML file that is not found from the working directory
is first looked for in the file's folder: :mod:`gpautotune.problems.input_files`). Places
1, 2 and 4 do not depend on where the
package is installed, so a regular (non-editable) install finds the data too.

``kt-cache``'s relative ``path`` is looked for from the working directory, then (written
in a YAML file) in that file's folder, then in places 1 to 4; a name found nowhere is
refused with every place looked in, in order.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpautotune.exceptions import DataNotFoundError
from gpautotune.problems.input_files import is_file

__all__ = ["find_data", "data_roots", "ENV_VAR"]

ENV_VAR = "GPAUTOTUNE_DATA"


def _user_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "gpautotune"


def data_roots() -> list[Path]:
    """The folders searched for data files, in order (see the module docstring)."""
    roots = [Path(p).expanduser() for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p]
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        roots += [folder / "shared" / "data" for folder in (start, *start.parents)]
    roots.append(_user_data_dir())
    return list(dict.fromkeys(roots))


def find_data(
    relative: str,
    path: str | os.PathLike[str] | None = None,
    option: str = "data",
    *,
    here: bool = False,
) -> Path:
    """Resolve a data file: the explicit ``path`` if given, else search :func:`data_roots`.

    Args:
        relative: the file's path under a data folder (an absolute path is used as is).
        path: the file itself, used as given.
        option: the caller's option that names the file (``data`` for ``replay``,
            ``path`` for ``kt-cache``), named in the error.
        here: look for ``relative`` from the working directory first (``kt-cache``'s
            ``path``: the file, or its path under a data folder).

    Raises:
        DataNotFoundError: naming every place looked in, in order, and how to point
            elsewhere.
    """
    if path is not None or Path(relative).expanduser().is_absolute():
        p = Path(relative if path is None else path).expanduser()
        if not p.is_file():
            raise DataNotFoundError(
                f"data file {str(p)!r} does not exist; fix the path given as `{option}`"
            )
        return p
    if here and is_file(relative):
        return Path(relative)
    roots = data_roots()
    for root in roots:
        if (root / relative).is_file():
            return root / relative
    raise DataNotFoundError(
        f"cannot find {relative!r}; looked in, in order: {_places(relative, here)}. "
        f"{_existing(roots)}. Set {ENV_VAR} to the folder that holds it, or give the "
        f"file's path (`{option}:` in the file, --set problem.{option}=PATH)"
    )


def _places(relative: str, here: bool) -> str:
    """The places :func:`find_data` looks for ``relative`` in, in order, in words: the
    working directory (with ``here``) and, for a path written in a YAML file, that file's
    folder (:func:`~gpautotune.problems.input_files.find_input` looked there), then the
    data folders of :func:`data_roots`."""
    places = []
    if here:
        places.append(
            f"the working directory ({Path.cwd().resolve()}); the folder of the YAML file "
            "that names it, if one does"
        )
    given = [p for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p]
    places += [
        f"${ENV_VAR} ({', '.join(given) if given else 'not set'})",
        "shared/data/ in the working directory and in each folder above it",
        f"shared/data/ in the package's folder ({Path(__file__).resolve().parent}) and in "
        "each folder above it",
        f"the user's data folder ({_user_data_dir()})",
    ]
    return "; ".join(places)


def _existing(roots: list[Path]) -> str:
    """Which of the data folders ``roots`` exist, in words."""
    existing = [str(r) for r in roots if r.is_dir()]
    if not existing:
        return "None of the data folders exists"
    if len(existing) == 1:
        return f"Of the data folders, only {existing[0]} exists"
    return f"Of the data folders, these exist: {', '.join(existing)}"
