"""Evaluators: in-process (and, per problem, isolated subprocesses)."""

from gpautotune.execution._evaluator import Evaluation, Evaluator, InProcessEvaluator

__all__ = ["Evaluation", "Evaluator", "InProcessEvaluator"]
