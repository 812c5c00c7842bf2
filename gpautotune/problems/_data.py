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
"""

from __future__ import annotations

import os
from pathlib import Path

from gpautotune.exceptions import DataNotFoundError

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
    relative: str, path: str | os.PathLike[str] | None = None, option: str = "data"
) -> Path:
    """Resolve a data file: the explicit ``path`` if given, else search :func:`data_roots`.

    Args:
        relative: the file's path under a data folder (an absolute path is used as is).
        path: the file itself, used as given.
        option: the caller's option that names the file (``data`` for ``replay``,
            ``path`` for ``kt-cache``), named in the error.

    Raises:
        DataNotFoundError: naming the places looked at and how to point elsewhere.
    """
    if path is not None or Path(relative).expanduser().is_absolute():
        p = Path(relative if path is None else path).expanduser()
        if not p.is_file():
            raise DataNotFoundError(
                f"data file {str(p)!r} does not exist; fix the path given as `{option}`"
            )
        return p
    roots = data_roots()
    for root in roots:
        if (root / relative).is_file():
            return root / relative
    existing = [str(r) for r in roots if r.is_dir()]
    looked = f"the data folders here ({', '.join(existing)})" if existing else "no data folder"
    raise DataNotFoundError(
        f"cannot find {relative!r}: found {looked}; looked in ${ENV_VAR}, shared/data/ in the "
        f"current folder and its parents, and {_user_data_dir()}. Set {ENV_VAR} to the "
        f"folder that holds it, or give the file itself (`{option}:` in the file, "
        f"--set problem.{option}=PATH)"
    )
