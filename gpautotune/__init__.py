"""gpautotune: Bayesian-optimization autotuning with Gaussian processes.

The public names are imported on first use (PEP 562), so that ``import gpautotune`` and
the command line start without loading NumPy's, SciPy's or PyTorch's stacks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gpautotune.version import __version__

if TYPE_CHECKING:
    from gpautotune.exceptions import GPAutotuneError
    from gpautotune.kernel import tune_kernel
    from gpautotune.measurement import Measurement, Status
    from gpautotune.problems import Problem
    from gpautotune.space import Space
    from gpautotune.storage import Journal
    from gpautotune.strategies import Strategy, make_strategy, register
    from gpautotune.trial import Trial
    from gpautotune.tuner import TuneResult, TuningRun, tune

_LAZY = {
    "GPAutotuneError": "gpautotune.exceptions",
    "Journal": "gpautotune.storage",
    "Measurement": "gpautotune.measurement",
    "Problem": "gpautotune.problems",
    "Space": "gpautotune.space",
    "Status": "gpautotune.measurement",
    "Strategy": "gpautotune.strategies",
    "Trial": "gpautotune.trial",
    "TuneResult": "gpautotune.tuner",
    "TuningRun": "gpautotune.tuner",
    "make_strategy": "gpautotune.strategies",
    "register": "gpautotune.strategies",
    "tune": "gpautotune.tuner",
    "tune_kernel": "gpautotune.kernel",
}

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
    "__version__",
    "make_strategy",
    "register",
    "tune",
    "tune_kernel",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
