"""Evaluators: how a problem is called (in process, or in an isolated worker process).

Evaluators are the boundary where crashes become statuses; the processes they (and
problems) start die with their parent (:func:`die_with_parent`,
:func:`parent_death_preexec`); running whole comparisons on
Dask is :mod:`gpautotune.comparison`'s job.
"""

from gpautotune.execution._evaluator import Evaluable, Evaluation, Evaluator, InProcessEvaluator
from gpautotune.execution._isolated import IsolatedEvaluator
from gpautotune.execution._lifetime import (
    die_with_parent,
    owned_temp_folder,
    parent_death_preexec,
    remove_orphaned_folders,
    signals_end_cleanly,
)

__all__ = [
    "Evaluable",
    "Evaluation",
    "Evaluator",
    "InProcessEvaluator",
    "IsolatedEvaluator",
    "die_with_parent",
    "owned_temp_folder",
    "parent_death_preexec",
    "remove_orphaned_folders",
    "signals_end_cleanly",
]
