"""The tuning loop and the ask/tell API.

:class:`TuningRun` owns storage: every trial is committed to the journal before the
strategy is told about it. Runs are identified by (problem, its settings, strategy, its
settings, seed, label); opening the same run again resumes it: stored trials are told to
a fresh strategy, nothing stored is measured again, and the budget counts every stored
evaluation, failures included (warm-start trials are data, not budget). A label is the
run's name, as a study's name is in Optuna: it names a strategy with its options on a
problem (runs may share it across seeds and problems); a new run of the problem under it
with another strategy or other options is refused (:class:`RunNameError`), nothing
stored.

A resumed run continues as the uninterrupted one would have: strategies propose from the
trials told (and the proposals still pending) alone, and a batch (``ask(n)``, ``n > 1``)
records where it was asked (``batch: [trials before it, n]`` in its trials' info), so a
run killed in the middle of a batch asks that batch again from the same trials and
measures what is left of it before asking anew. An asynchronous run
(:mod:`gpautotune.parallel`) records each configuration as running when it is dispatched
instead: a resumed run measures the ones in flight again, once each, with their proposal
info, and asks the strategy for the rest with those as pending.
"""

from __future__ import annotations

from gpautotune.storage import RunNameError
from gpautotune.tuner._identity import run_spec
from gpautotune.tuner._result import TuneResult, best_trial
from gpautotune.tuner._run import TuningRun
from gpautotune.tuner._tune import FIRST_BUILD_ERRORS, FIRST_CRASHES, tune
from gpautotune.tuner._warm_start import import_trials

__all__ = [
    "FIRST_BUILD_ERRORS",
    "FIRST_CRASHES",
    "RunNameError",
    "TuneResult",
    "TuningRun",
    "best_trial",
    "import_trials",
    "run_spec",
    "tune",
]
