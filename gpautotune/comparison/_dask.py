"""Repetitions as Dask tasks: the cluster, the task function, the device lease.

Each repetition of a comparison is one ``dask.distributed`` task that builds its problem
and strategy in the worker and tunes with the SQLite journal as storage. The journal
makes the task idempotent: a task rerun after its worker died reopens the same run (same
key), resumes from the trials already committed and measures only what is missing, so
every trial is stored exactly once.

A run owned by another live process (a second comparison on the same journal, or the
workers of an interrupted one, still shutting down) is not Dask's to retry at once: the
task waits for the owner with growing pauses, resumes the run if it is let go (finished,
there is nothing left to measure), and otherwise returns a failed outcome saying so.

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
from typing import TYPE_CHECKING, Any

from distributed import Semaphore

from gpautotune.comparison._config import Repetition
from gpautotune.config import build_problem, build_strategy
from gpautotune.parallel import dask_client
from gpautotune.problems import Problem
from gpautotune.storage import Journal, RunNameError, RunOwnedError

if TYPE_CHECKING:
    from gpautotune.tuner import TuneResult

__all__ = ["RepetitionOutcome", "dask_client", "run_repetition", "HARDWARE_LEASE", "OWNER_WAIT_S"]

_log = logging.getLogger(__name__)

#: Name of the Dask semaphore that serialises hardware-measuring repetitions.
HARDWARE_LEASE = "gpautotune-hardware"

#: How long a repetition waits for another live process to let go of its run: well beyond
#: the few seconds the workers of an interrupted comparison take to be shut down.
OWNER_WAIT_S = 30.0
#: The first pause of that wait, doubled after each attempt up to the last.
_FIRST_PAUSE_S, _LAST_PAUSE_S = 0.5, 8.0

#: An error text, in a line of output, is cut to this many characters.
_ERROR_CHARS = 400

_PROTOTYPES: dict[str, bytes] = {}


@dataclass(frozen=True)
class RepetitionOutcome:
    """What one repetition task returned (or how it failed).

    Attributes:
        repetition: the repetition.
        run_id: its run in the journal (-1 when it failed before opening one).
        used: evaluations counted in the budget.
        best_value: the best ok value, None if none succeeded.
        duration_s: the task's wall time (waits for another owner of its run included).
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

    def describe(self) -> str:
        """One line: the repetition (problem / label / seed) and, if it failed, the error."""
        if self.ok:
            return self.repetition.describe()
        error = " ".join(str(self.error).split())
        if len(error) > _ERROR_CHARS:
            error = error[: _ERROR_CHARS - 3] + "..."
        return f"{self.repetition.describe()}: {error}"


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
    rep: Repetition,
    hardware_slots: int = 1,
    lease: bool = True,
    owner_wait_s: float = OWNER_WAIT_S,
) -> RepetitionOutcome:
    """Tune one repetition into its journal (resuming what is stored); the Dask task.

    Args:
        rep: the repetition.
        hardware_slots: leases of the cluster-wide hardware semaphore.
        lease: take a lease when the problem measures hardware (False when Dask worker
            resources serialise hardware tasks instead).
        owner_wait_s: how long to wait for another live process that owns the run (see
            the module); then the outcome is a failure saying so (not raised: Dask would
            log it and retry at once).
    """
    start = time.perf_counter()
    pause, waited = _FIRST_PAUSE_S, 0.0
    while True:
        try:
            result = _tune(rep, hardware_slots, lease)
            break
        except RunNameError as exc:  # a label another process took meanwhile: not retried
            error = f"{type(exc).__name__}: {exc}"
            return RepetitionOutcome(rep, -1, 0, None, time.perf_counter() - start, _here(), error)
        except RunOwnedError as exc:
            if waited + pause > owner_wait_s:
                waits = f" (waited {waited:g} s for it)" if waited else ""
                error = f"{type(exc).__name__}: {exc}{waits}"
                return RepetitionOutcome(
                    rep, -1, 0, None, time.perf_counter() - start, _here(), error
                )
            _log.info("%s: %s; trying again in %g s", rep.describe(), exc, pause)
            time.sleep(pause)
            waited += pause
            pause = min(2 * pause, _LAST_PAUSE_S)
    return RepetitionOutcome(
        rep,
        result.run_id,
        result.used,
        result.best_value,
        time.perf_counter() - start,
        _here(),
    )


def _tune(rep: Repetition, hardware_slots: int, lease: bool) -> TuneResult:
    """One attempt at the repetition, with a fresh problem and strategy (a failed attempt
    may have told its strategy trials) and the hardware lease held only meanwhile."""
    from gpautotune.tuner import tune

    problem = _problem_for(rep)
    try:
        strategy = build_strategy(rep.strategy, problem, rep.seed)
        guard = (
            Semaphore(max_leases=hardware_slots, name=HARDWARE_LEASE)
            if rep.hardware and lease
            else nullcontext()
        )
        with guard, Journal(rep.storage) as journal:
            return tune(
                problem,
                strategy,
                rep.budget,
                storage=journal,
                seed=rep.seed,
                label=rep.label,
                batch_size=rep.strategy.batch_size,
            )
    finally:
        close = getattr(problem, "close", None)
        if callable(close):
            close()


def _here() -> str:
    """``host:pid`` of this process: the worker an outcome comes from."""
    return f"{socket.gethostname()}:{os.getpid()}"


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
