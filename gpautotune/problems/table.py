"""A replay problem described entirely in YAML: a CSV and its space."""

from __future__ import annotations

from typing import Annotated, Any

from gpautotune.problems._data import find_data
from gpautotune.problems.input_files import InputFile
from gpautotune.problems.replay import ReplayProblem
from gpautotune.space import space_from_spec

__all__ = ["replay_from_spec"]


def replay_from_spec(
    data: Annotated[str, InputFile()],
    objective: str,
    parameters: list[dict[str, Any]],
    constraints: list[str] | None = None,
    derived: dict[str, str] | None = None,
    label: str = "replay",
) -> ReplayProblem:
    """Replay ``data`` (CSV) over a space given as data (see :func:`space_from_spec`);
    ``label`` is the problem's name in journals and reports (in a YAML section ``name``
    is the registered problem, ``replay``, as for ``kt-cache``)."""
    space = space_from_spec(parameters, constraints or [], derived, name=label)
    return ReplayProblem(find_data(data, data), space, objective=objective, name=label)
