"""What is tuned: the problem contract, replayed tables, synthetic functions, real kernels."""

from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem, in_family
from gpautotune.problems._data import find_data
from gpautotune.problems._imports import OPT_IN, import_object
from gpautotune.problems._registry import (
    available_problems,
    make_problem,
    problem_factory,
    register_problem,
)
from gpautotune.problems.replay import ReplayProblem, laplacian_replay
from gpautotune.problems.synthetic import BoothProblem, ConstrainedBitsProblem, ScreeningProblem

__all__ = [
    "OPT_IN",
    "BoothProblem",
    "ConstrainedBitsProblem",
    "Measurement",
    "Problem",
    "ReplayProblem",
    "ScreeningProblem",
    "Status",
    "available_problems",
    "find_data",
    "import_object",
    "in_family",
    "laplacian_replay",
    "make_problem",
    "problem_factory",
    "register_problem",
]
