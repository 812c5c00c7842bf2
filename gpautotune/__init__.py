"""gpautotune: Bayesian-optimization autotuning with Gaussian processes."""

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
]
