"""Comparisons: problems x strategies x repetitions, described in YAML and run on Dask.

The file format and its expansion into repetitions are imported eagerly; the Dask names
(:func:`run_comparison`, :func:`dask_client`, ...) on first use, so that reading a
comparison file never imports Dask.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpautotune.comparison._config import (
    ComparisonConfig,
    Repetition,
    StrategyEntry,
    default_checkpoints,
    expand,
    load_comparison,
)

__all__ = [
    "ComparisonConfig",
    "ComparisonResult",
    "Repetition",
    "RepetitionOutcome",
    "StrategyEntry",
    "dask_client",
    "default_checkpoints",
    "expand",
    "load_comparison",
    "pending_repetitions",
    "run_comparison",
    "run_repetition",
    "select_problems",
]

_LAZY = {
    "ComparisonResult": "gpautotune.comparison._run",
    "pending_repetitions": "gpautotune.comparison._run",
    "run_comparison": "gpautotune.comparison._run",
    "select_problems": "gpautotune.comparison._run",
    "RepetitionOutcome": "gpautotune.comparison._dask",
    "dask_client": "gpautotune.comparison._dask",
    "run_repetition": "gpautotune.comparison._dask",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
