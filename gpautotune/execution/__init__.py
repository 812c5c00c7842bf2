"""Evaluators (in-process, isolated worker process) and comparisons run on Dask.

The Dask names are imported on first use, so that tuning alone never imports Dask.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpautotune.execution._evaluator import Evaluable, Evaluation, Evaluator, InProcessEvaluator
from gpautotune.execution._isolated import IsolatedEvaluator

__all__ = [
    "ComparisonResult",
    "Evaluable",
    "Evaluation",
    "Evaluator",
    "InProcessEvaluator",
    "IsolatedEvaluator",
    "RepetitionOutcome",
    "dask_client",
    "run_comparison",
]

_LAZY = {
    "ComparisonResult": "gpautotune.execution._compare",
    "run_comparison": "gpautotune.execution._compare",
    "RepetitionOutcome": "gpautotune.execution._dask",
    "dask_client": "gpautotune.execution._dask",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
