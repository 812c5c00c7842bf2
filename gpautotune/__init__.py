"""gpautotune: Bayesian-optimization autotuning with Gaussian processes."""

from typing import Any

from gpautotune.exceptions import GPAutotuneError
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.space import Space
from gpautotune.storage import Journal
from gpautotune.strategies import Strategy, make_strategy, register
from gpautotune.trial import Trial
from gpautotune.tuner import TuneResult, TuningRun, tune

__version__ = "0.1.0"

__all__ = [
    "GPAutotuneError",
    "Journal",
    "Measurement",
    "Problem",
    "Space",
    "Status",
    "Strategy",
    "Trial",
    "TuneResult",
    "TuningRun",
    "make_strategy",
    "register",
    "tune",
    "tune_kernel",
]


def __getattr__(name: str) -> Any:
    if name == "tune_kernel":  # imported on first use: the kernel problems are not needed to tune
        from gpautotune.kernel import tune_kernel

        return tune_kernel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
