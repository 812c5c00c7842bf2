"""Checks made before a run opens, so that a mistake leaves no run behind: a Problem
class given for an instance, a Problem without a space, a space that admits nothing,
warm-start trials (or a warm-start file's rows) outside it, a budget below a stored run's
trials, and the whole numbers that budgets, batch sizes and worker counts must be."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gpautotune.exceptions import BudgetError, ConfigError, GPAutotuneError, SpaceError
from gpautotune.problems import Problem
from gpautotune.space import Space
from gpautotune.storage import Journal, RunRecord
from gpautotune.trial import Origin, Trial

__all__ = [
    "EMPTY_CHECK_LIMIT",
    "check_budget",
    "check_problem_instance",
    "check_space",
    "check_warm_start",
    "positive_int",
    "refuse_outside",
    "warm_configs",
]


#: Raw spaces up to this size are counted before a run, to refuse one with no valid
#: configuration (a few milliseconds); larger ones rely on the constraint groups' plan.
EMPTY_CHECK_LIMIT = 1 << 17


def positive_int(value: Any, *, zero: bool = False) -> bool:
    """Whether ``value`` is an int (numpy's too, not a bool) of at least 1 (0 with
    ``zero``)."""
    whole = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    return whole and value >= (0 if zero else 1)


def warm_configs(trials: Sequence[Trial], *, every: bool = False) -> list[dict[str, Any]]:
    """The configurations of the warm-start trials among ``trials`` (of all with ``every``)."""
    return [dict(t.config) for t in trials if every or t.origin is Origin.WARM_START]


def check_warm_start(space: Space, warm_start: Sequence[Trial]) -> None:
    """Refuse warm-start trials outside the space (unknown parameters or levels, broken
    constraints): stored as the run's, one could be its best while the strategies never
    propose it. The check of a warm-start file's rows (:func:`refuse_outside`), naming
    the trials of the list.

    Raises:
        SpaceError: naming how many and the first, with what is wrong with it.
    """
    configs = [t.config for t in warm_start]
    refuse_outside(
        space,
        configs,
        "warm_start",
        lambda i: f"trial {i}, {dict(configs[i])}",
        "trials",
        fixes=("leave them out", "leave them out"),
        error=SpaceError,
    )


def refuse_outside(
    space: Space,
    configs: Sequence[Mapping[str, Any]],
    where: str,
    label: Callable[[int], str],
    noun: str = "rows",
    *,
    fixes: tuple[str, str] = (
        "remove them from the file, or tune a space whose parameters take these values",
        "remove them from the file, or loosen the constraints",
    ),
    error: type[GPAutotuneError] = ConfigError,
) -> None:
    """Refuse warm-start configurations outside the space, naming where they come from
    (``where``: a file, ``warm_start``), how many ``noun`` (rows, records, trials), the
    first (``label(i)``: ``row 5``) and what to fix (``fixes``): parameters the space
    lacks or a configuration lacks, values that are not levels of a parameter (or lie
    outside its range), then broken constraints.

    Raises:
        ConfigError (or ``error``): some configurations are outside the space.
    """
    why = _not_configurations(space, configs)
    if why:
        first = min(why)
        raise error(
            f"{where}: {len(why)} of {len(configs)} {noun} are not configurations of the "
            f"space ({label(first)}: {why[first]}); {fixes[0]}"
        )
    outside = np.flatnonzero(~space.valid_mask(space.to_index(configs)))
    if len(outside):
        first = int(outside[0])
        raise error(
            f"{where}: {len(outside)} of {len(configs)} {noun} break the space's constraints "
            f"({label(first)} breaks {space.violated(configs[first])}); {fixes[1]}"
        )


def _not_configurations(space: Space, configs: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Why each of ``configs`` that is not a configuration of the space is not (its
    first fault: parameters missing or unknown, else the first value that is not a
    level), by position; each distinct value of a parameter is checked once."""
    names, why = set(space.names), {}
    for i, config in enumerate(configs):
        missing = [n for n in space.names if n not in config]
        unknown = [k for k in config if k not in names]
        faults = [
            f"{w} parameter(s) {f}" for w, f in (("missing", missing), ("unknown", unknown)) if f
        ]
        if faults:
            why[i] = f"{' and '.join(faults)}; the space has {space.names}"
    for p in space.parameters:
        verdicts: dict[tuple[type, str], str | None] = {}
        for i, config in enumerate(configs):
            if i in why:
                continue
            value = config[p.name]
            key = (type(value), repr(value))
            if key not in verdicts:
                try:
                    p.index_of([value])
                    verdicts[key] = None
                except (SpaceError, TypeError, ValueError) as exc:
                    verdicts[key] = str(exc)
            if verdicts[key] is not None:
                why[i] = verdicts[key]
    return why


def check_budget(journal: Journal, existing: RunRecord, budget: int) -> None:
    """Refuse a budget smaller than the trials a stored run holds (it would leave measured
    trials out of the run's reports).

    Raises:
        BudgetError: naming the run and the smallest budget that keeps them.
    """
    used = journal.count_trials(existing.id)
    if used > budget:
        raise BudgetError(
            f"run {existing.id} ({existing.describe()}) in {journal.path!r} has {used} "
            f"trials; a budget of {budget} would leave {used - budget} of them out: give a "
            f"budget of at least {used} (a report reads the best at a smaller budget with "
            "--checkpoint)"
        )


def check_problem_instance(problem: Any) -> None:
    """Refuse a :class:`Problem` subclass given for an instance (as a plain function it
    would be called with each configuration) and a Problem without a :class:`Space`.

    Raises:
        ConfigError: naming the class and the fix.
    """
    if isinstance(problem, type) and issubclass(problem, Problem):
        name = problem.__name__
        raise ConfigError(f"{name} is a Problem class: pass an instance, {name}()")
    if not isinstance(problem, Problem):
        return
    name = type(problem).__name__
    if inspect.getattr_static(problem, "space", None) is None:  # Problem only annotates it
        raise ConfigError(
            f"the problem has no `space`: give {name} one, a gpautotune.space.Space (a class "
            "attribute `space = Space([...])`, or `self.space = ...` in its __init__)"
        )
    if not isinstance(problem.space, Space):
        raise ConfigError(
            f"the problem's `space` is a {type(problem.space).__name__}, not a "
            f"gpautotune.space.Space: give {name} one built from typed parameters, e.g. "
            "Space([IntRange('n', 1, 8)])"
        )


def check_space(space: Space) -> None:
    """Refuse a space whose constraints admit no configuration: seen by its sampling plan
    (an enumerated constraint group with no valid combination), or counted where the raw
    space is small.

    Raises:
        SpaceError: naming the constraints.
    """
    empty = space.sampling_plan.empty or (
        space.is_enumerable(EMPTY_CHECK_LIMIT) and not len(space.enumerate_index(EMPTY_CHECK_LIMIT))
    )
    if empty:
        texts = [c.text for c in space.constraints]
        raise SpaceError(
            f"the constraints {texts} admit no configuration of the space's parameters: "
            "loosen them or widen the parameters' ranges (`gpautotune space` counts them)"
        )
