"""Where the seeds' public data lives, and how users point elsewhere.

The seeds' measured tables are public data (``phrb/dopt_anova_experiments``) and are not
shipped with the package. They are read from ``shared/data/`` found beside the checkout
(``../shared/data`` of the repository), from the folder named by the environment variable
``GPAUTOTUNE_DATA``, or from an explicit path (``data:`` in YAML, ``--data`` on the CLI).
"""

from __future__ import annotations

import os
from pathlib import Path

from gpautotune.exceptions import DataNotFoundError

__all__ = ["find_data"]

ENV_VAR = "GPAUTOTUNE_DATA"


def _candidates(relative: str) -> list[Path]:
    roots: list[Path] = []
    if os.environ.get(ENV_VAR):
        roots.append(Path(os.environ[ENV_VAR]))
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            roots.append(folder / "shared" / "data")
    return [root / relative for root in roots]


def find_data(relative: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve a data file: the explicit ``path`` if given, else search the known places.

    Raises:
        DataNotFoundError: naming every place looked at and how to point elsewhere.
    """
    if path is not None:
        p = Path(path).expanduser()
        if not p.is_file():
            raise DataNotFoundError(
                f"data file {str(p)!r} does not exist; fix the path given as `data`"
            )
        return p
    tried = _candidates(relative)
    for p in tried:
        if p.is_file():
            return p
    raise DataNotFoundError(
        f"cannot find {relative!r}: looked in $GPAUTOTUNE_DATA and every shared/data/ above the "
        f"current folder and the package (e.g. {tried[-1] if tried else '?'}); "
        "set GPAUTOTUNE_DATA to the folder holding it or give the file with `data:` / --data"
    )
