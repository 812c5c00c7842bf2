"""Evaluations as Dask tasks: one task per configuration, on any Dask cluster.

The problem goes to the workers once, as a worker plugin registered on the scheduler:
each worker (one started or restarted later included) unpickles it on first use, with
its default evaluator (in-process, or an isolated process for real kernels), and keeps
both between tasks. When a worker dies mid-evaluation the scheduler runs the task again
on another worker; the client gets one result, so the trial is recorded once. A
configuration that keeps killing workers (Dask's ``KilledWorker``) becomes a
``run_error`` trial.

Problems that measure hardware run one evaluation per device: when workers declare the
resource ``GPU`` (``dask worker --resources GPU=1``), each task needs one unit of it and
only those workers get tasks.
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import cloudpickle
from distributed import Client, Future, KilledWorker, get_worker, wait
from distributed.diagnostics.plugin import WorkerPlugin

from gpautotune.exceptions import ConfigError, DeviceError, GPAutotuneError
from gpautotune.execution import Evaluation, Evaluator, IsolatedEvaluator
from gpautotune.measurement import Measurement, Status
from gpautotune.parallel._cluster import DEVICE_RESOURCE, dask_client
from gpautotune.parallel._loop import Finished, run_parallel
from gpautotune.problems import Problem
from gpautotune.problems.opencl import DeviceInfo, assigned_device
from gpautotune.space import Config
from gpautotune.trial import Trial

__all__ = ["DaskWorkers", "ProblemPlugin", "evaluate_on_worker", "tune_on_dask"]

if TYPE_CHECKING:  # the tuner layer sits above this one
    from gpautotune.tuner import TuningRun

_log = logging.getLogger(__name__)


class ProblemPlugin(WorkerPlugin):
    """The problem of a run on a worker, with one evaluator per worker thread, closed when
    the plugin is removed (or the worker stops).

    On setup, a problem that measures an OpenCL device (a ``device_info``) checks the
    device this worker is given (:func:`~gpautotune.problems.opencl.assigned_device`),
    and a problem evaluated in an isolated process checks that the worker may start one
    (not a daemonic process): a worker that cannot measure fails the run with the reason
    (no trial is spent on it).

    Args:
        payload: the pickled problem (``cloudpickle``; read with :func:`pickle.loads`).
    """

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self._local = threading.local()
        self._evaluators: list[Evaluator] = []
        self._lock = threading.Lock()
        self._spare: Problem | None = None  # unpickled by setup, for the first thread
        self.error: Exception | None = None

    def setup(self, worker: Any) -> None:
        problem = self._spare = pickle.loads(self.payload)
        if multiprocessing.current_process().daemon and isinstance(
            problem.default_evaluator(), IsolatedEvaluator
        ):
            self.error = ConfigError(
                f"worker {worker.address} runs in a daemonic process, which cannot start the"
                f" evaluation process {type(problem).__name__} needs: start the Dask workers"
                " with DASK_DISTRIBUTED__WORKER__DAEMON=False in their environment"
            )
            raise self.error
        info = getattr(problem, "device_info", None)
        if isinstance(info, DeviceInfo):
            try:
                assigned_device(info)
            except DeviceError as exc:
                self.error = DeviceError(f"worker {worker.address}: {exc}")
                raise self.error from None

    def __getstate__(self) -> dict[str, Any]:
        return {"payload": self.payload}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["payload"])

    def evaluate(self, config: Config) -> Evaluation:
        """Evaluate ``config`` with this thread's problem and evaluator."""
        if self.error is not None:
            raise self.error
        if not hasattr(self._local, "problem"):
            with self._lock:
                problem, self._spare = self._spare, None
            problem = problem or pickle.loads(self.payload)
            evaluator = problem.default_evaluator()
            with self._lock:
                self._evaluators.append(evaluator)
            self._local.problem, self._local.evaluator = problem, evaluator
        return self._local.evaluator(self._local.problem, config)

    def teardown(self, worker: Any) -> None:
        with self._lock:
            evaluators, self._evaluators = self._evaluators, []
        for evaluator in evaluators:
            evaluator.close()


def evaluate_on_worker(plugin: str, config: Config) -> tuple[Evaluation, str]:
    """The Dask task: evaluate ``config`` with the problem of the plugin named ``plugin``;
    returns the evaluation and the worker's address."""
    worker = get_worker()
    problem: ProblemPlugin | None = worker.plugins.get(plugin)
    if problem is None:
        raise GPAutotuneError(
            f"worker {worker.address} does not hold the run's problem (see its log)"
        )
    return problem.evaluate(config), str(worker.address)


def problem_payload(problem: Problem) -> bytes:
    """``problem`` as the workers receive it (``cloudpickle``: by value where pickle goes
    by reference, as functions of a script or notebook).

    Raises:
        ConfigError: the problem cannot be pickled.
    """
    try:
        return cloudpickle.dumps(problem)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing
        raise ConfigError(
            f"{type(problem).__name__} cannot be sent to Dask workers (not picklable: {exc})"
        ) from None


class DaskWorkers:
    """The :class:`~gpautotune.parallel.Workers` of a Dask client: one task per evaluation.

    Args:
        client: a client of the cluster (see :func:`~gpautotune.parallel.dask_client`).
        problem: the problem to evaluate (picklable).
        resources: what each task needs of a worker; by default ``{"GPU": 1}`` for a
            problem that measures hardware when some worker declares ``GPU``, else none.
        wait_s: how long to wait for a worker to (re)appear before giving up.

    Raises:
        ConfigError: the problem cannot be pickled.
    """

    def __init__(
        self,
        client: Client,
        problem: Problem,
        *,
        resources: dict[str, float] | None = None,
        wait_s: float = 120.0,
    ) -> None:
        payload = problem_payload(problem)
        self.client, self.wait_s = client, wait_s
        self.plugin = f"gpautotune-problem-{uuid.uuid4().hex[:12]}"
        self._futures: dict[Future, int] = {}
        self._wait_for_workers()
        try:
            client.register_plugin(ProblemPlugin(payload), name=self.plugin)
        except GPAutotuneError as exc:
            self.close()
            raise type(exc)(str(exc)) from None
        if resources is None and problem.measures_hardware and self._capacity(DEVICE_RESOURCE):
            resources = {DEVICE_RESOURCE: 1}
        self.resources = dict(resources or {})

    def _workers(self) -> dict[str, Any]:
        return self.client.scheduler_info(n_workers=-1)["workers"]

    def _capacity(self, resource: str | None) -> int:
        workers = self._workers().values()
        if resource is None:
            return sum(int(w.get("nthreads", 1)) for w in workers)
        return sum(int(w.get("resources", {}).get(resource, 0)) for w in workers)

    def _wait_for_workers(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=self.wait_s)
        except TimeoutError:
            raise GPAutotuneError(
                f"no Dask worker joined the scheduler within {self.wait_s:g} s"
            ) from None

    def slots(self) -> int:
        """Threads of the workers, or units of the resource tasks need (at least 1)."""
        deadline = time.monotonic() + self.wait_s
        while True:
            resource = next(iter(self.resources), None)
            found = self._capacity(resource)
            if resource is not None:
                found = int(found / self.resources[resource])
            if found > 0:
                return found
            if time.monotonic() > deadline:
                raise GPAutotuneError(
                    f"no Dask worker with {resource or 'threads'} for {self.wait_s:g} s"
                )
            time.sleep(0.5)

    def submit(self, ticket: int, config: Config) -> None:
        future = self.client.submit(
            evaluate_on_worker,
            self.plugin,
            dict(config),
            key=f"{self.plugin}-{ticket}",
            pure=False,
            resources=self.resources or None,
        )
        self._futures[future] = ticket

    def wait(self) -> list[Finished]:
        wait(list(self._futures), return_when="FIRST_COMPLETED")
        done = sorted((f for f in self._futures if f.done()), key=self._futures.__getitem__)
        return [self._finished(f, self._futures.pop(f)) for f in done]

    def _finished(self, future: Future, ticket: int) -> Finished:
        if future.status == "finished":
            evaluation, worker = future.result()
            return Finished(ticket, evaluation, worker)
        exc = future.exception() if future.status == "error" else None
        if isinstance(exc, KilledWorker):
            measurement = Measurement.failure(
                Status.RUN_ERROR, f"the evaluation killed every Dask worker it ran on: {exc}"
            )
            return Finished(ticket, Evaluation(measurement, time.time(), 0.0))
        raise GPAutotuneError(f"an evaluation failed on the Dask workers: {exc or future.status}")

    def close(self) -> None:
        """Cancel what is still running and remove the problem from the workers."""
        if self._futures:
            self.client.cancel(list(self._futures))
            self._futures.clear()
        try:
            self.client.unregister_worker_plugin(self.plugin)
        except Exception as exc:  # noqa: BLE001 - the cluster may be gone already
            _log.debug("could not remove plugin %s: %s", self.plugin, exc)


def tune_on_dask(
    run: TuningRun,
    problem: Problem,
    *,
    workers: int | None = None,
    client: Client | None = None,
    callback: Callable[[Trial, Any], None] | None = None,
) -> None:
    """Tune ``run`` on ``client``'s workers, or on a local cluster of ``workers``
    processes, then mark it finished (what ``tune(..., workers=N)`` does).

    Raises:
        ConfigError: both ``workers`` and ``client``, or neither.
    """
    if (workers is None) == (client is None):
        raise ConfigError("give workers (a local Dask cluster) or client, not both")
    with nullcontext(client) if client is not None else dask_client(workers=workers) as c:
        pool = DaskWorkers(c, problem)
        try:
            run_parallel(run, pool, callback)
        finally:
            pool.close()
    run.finish()
