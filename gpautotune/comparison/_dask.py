"""Repetitions as Dask tasks: the cluster, the task function, the device lease.

Each repetition of a comparison is one ``dask.distributed`` task that builds its problem
and strategy in the worker and tunes with the SQLite journal as storage. The journal
makes the task idempotent: a task rerun after its worker died reopens the same run (same
key), resumes from the trials already committed and measures only what is missing, so
every trial is stored exactly once.

By default the cluster is a ``LocalCluster`` on this machine
(:func:`gpautotune.parallel.dask_client`): one single-threaded worker process per core.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from distributed import Semaphore

from gpautotune.comparison._config import Repetition
from gpautotune.config import build_problem, build_strategy
from gpautotune.parallel import dask_client
from gpautotune.problems import Problem
from gpautotune.storage import Journal

__all__ = ["RepetitionOutcome", "dask_client", "run_repetition", "HARDWARE_LEASE"]

_log = logging.getLogger(__name__)

#: Name of the Dask semaphore that serialises hardware-measuring repetitions.
HARDWARE_LEASE = "gpautotune-hardware"

_PROTOTYPES: dict[str, bytes] = {}


@dataclass(frozen=True)
class RepetitionOutcome:
    """What one repetition task returned (or how it failed).

    Attributes:
        repetition: the repetition.
        run_id: its run in the journal (-1 when it failed before opening one).
        used: evaluations counted in the budget.
        best_value: the best ok value, None if none succeeded.
        duration_s: the task's wall time (the last attempt's).
        worker: ``host:pid`` of the process that ran it.
        error: the error text when the task failed for good.
    """

    repetition: Repetition
    run_id: int
    used: int
    best_value: float | None
    duration_s: float
    worker: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _problem_for(rep: Repetition) -> Problem:
    """A fresh problem per repetition (no state carried between repetitions), built once
    per worker process and copied by unpickling where the problem pickles."""
    key = f"{rep.problem.model_dump_json()}|{rep.allow_imports}"
    blob = _PROTOTYPES.get(key)
    if blob is not None:
        return pickle.loads(blob)
    problem = build_problem(rep.problem, factory_names=True, allow_imports=rep.allow_imports)
    try:
        _PROTOTYPES[key] = pickle.dumps(problem)
    except Exception:  # noqa: BLE001 - unpicklable problems are simply rebuilt each time
        _log.debug("problem %s does not pickle; built afresh for each repetition", rep.problem.name)
    return problem


def run_repetition(
    rep: Repetition, hardware_slots: int = 1, lease: bool = True
) -> RepetitionOutcome:
    """Tune one repetition into its journal (resuming what is stored); the Dask task.

    Args:
        rep: the repetition.
        hardware_slots: leases of the cluster-wide hardware semaphore.
        lease: take a lease when the problem measures hardware (False when Dask worker
            resources serialise hardware tasks instead).
    """
    from gpautotune.tuner import tune

    start = time.perf_counter()
    problem = _problem_for(rep)
    strategy = build_strategy(rep.strategy, problem, rep.seed)
    guard = (
        Semaphore(max_leases=hardware_slots, name=HARDWARE_LEASE)
        if rep.hardware and lease
        else nullcontext()
    )
    with guard, Journal(rep.storage) as journal:
        result = tune(
            problem,
            strategy,
            rep.budget,
            storage=journal,
            seed=rep.seed,
            label=rep.label,
            batch_size=rep.strategy.batch_size,
        )
    close = getattr(problem, "close", None)
    if callable(close):
        close()
    return RepetitionOutcome(
        rep,
        result.run_id,
        result.used,
        result.best_value,
        time.perf_counter() - start,
        f"{socket.gethostname()}:{os.getpid()}",
    )


def task_options(
    rep: Repetition, retries: int, resources: Mapping[str, float] | None
) -> dict[str, Any]:
    """``Client.submit`` keywords: a key derived from the run key (the same repetition is
    one task even when two clients submit it), retries, and resources for hardware."""
    import hashlib

    digest = hashlib.sha1(f"{rep.storage}|{rep.key}|{rep.budget}".encode()).hexdigest()[:20]
    options: dict[str, Any] = {"key": f"repetition-{digest}", "retries": retries, "pure": False}
    if rep.hardware and resources:
        options["resources"] = dict(resources)
    return options
