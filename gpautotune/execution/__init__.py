"""Evaluators: in-process, and isolated in a worker process with a timeout."""

from gpautotune.execution._evaluator import Evaluation, Evaluator, InProcessEvaluator
from gpautotune.execution._isolated import IsolatedEvaluator

__all__ = ["Evaluation", "Evaluator", "InProcessEvaluator", "IsolatedEvaluator"]
