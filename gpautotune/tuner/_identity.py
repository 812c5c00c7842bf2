"""A run's identity in the journal: the specification that finds (or makes) its run.

A name taken by a run with other settings is refused by the journal, in the transaction
that makes the run (:meth:`~gpautotune.storage.Journal.open_run`,
:class:`~gpautotune.storage.RunNameError`)."""

from __future__ import annotations

from gpautotune.problems import Problem
from gpautotune.space import Space
from gpautotune.storage import RunObjective, RunSpec
from gpautotune.strategies import Strategy

__all__ = ["run_spec"]


def run_spec(
    target: Problem | Space,
    strategy: Strategy,
    *,
    seed: int | None,
    label: str | None,
    problem_name: str | None = None,
) -> RunSpec:
    """The journal identity of a run: problem (or space) and its settings, strategy and
    its settings, seed and label. Runs with the same key are one run (opening it again
    resumes it); a comparison builds it once per problem and strategy and varies the seed
    (``dataclasses.replace(spec, seed=...)``). A bare space is stored under
    ``problem_name``, else the space's name, else ``custom``. The problem's objective unit
    and direction go with it, outside the key (nothing known for a bare space)."""
    problem = target if isinstance(target, Problem) else None
    space = target.space if isinstance(target, Problem) else target
    return RunSpec(
        problem=problem.name if problem else (problem_name or space.name or "custom"),
        problem_settings=problem.describe() if problem else {},
        strategy=strategy.name,
        strategy_settings=strategy.settings(),
        seed=strategy.seed if seed is None else seed,
        space=space.describe(),
        label=label,
        data_digest=problem.data_digest() if problem else None,
        objective=RunObjective(problem.objective_unit, problem.direction, problem.samples_unit)
        if problem
        else RunObjective(),
    )
