"""Evaluators: how a problem is called (in process, or in an isolated worker process).

Evaluators are the boundary where crashes become statuses; running whole comparisons on
Dask is :mod:`gpautotune.comparison`'s job.
"""

from gpautotune.execution._evaluator import Evaluable, Evaluation, Evaluator, InProcessEvaluator
from gpautotune.execution._isolated import IsolatedEvaluator

__all__ = [
    "Evaluable",
    "Evaluation",
    "Evaluator",
    "InProcessEvaluator",
    "IsolatedEvaluator",
]
