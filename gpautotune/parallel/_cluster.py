"""Dask clusters for gpautotune: an existing scheduler, or local worker processes.

Both comparisons (one task per repetition) and asynchronous tuning runs (one task per
evaluation) run on a client from :func:`dask_client`. A local cluster has one
single-threaded worker process per slot (``OMP_NUM_THREADS=1`` in each, Dask's default),
non-daemonic so that problems may start their own worker processes (the isolated OpenCL
evaluator does). Given ``devices``, each local worker gets its own OpenCL device
(:data:`~gpautotune.problems.opencl.DEVICE_ENV` in its environment) and the resource
``GPU=1``, the way workers of a real cluster are started::

    GPAUTOTUNE_OPENCL_DEVICE=nvidia:1 dask worker tcp://HOST:8786 --nthreads 1 --resources GPU=1

Local workers ignore Ctrl-C (:mod:`~gpautotune.parallel._worker_setup`): the client shuts
them down, and a client left by an exception (an interrupt included) first silences
Dask's logging, its own and its local workers', so that the user sees gpautotune's
message, not a log line per cancelled task.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dask
from distributed import Client, LocalCluster, Nanny, Scheduler, SpecCluster

from gpautotune.exceptions import ConfigError, GPAutotuneError
from gpautotune.parallel._worker_setup import silence_distributed, silence_worker
from gpautotune.problems.opencl import DEVICE_ENV

__all__ = ["DEVICE_RESOURCE", "WORKER_SETUP", "dask_client", "device_workers"]

_log = logging.getLogger(__name__)

#: The Dask resource a worker with its own device declares (``--resources GPU=1``).
DEVICE_RESOURCE = "GPU"

#: The preload of local workers (they ignore SIGINT, see the module).
WORKER_SETUP = "gpautotune.parallel._worker_setup"

#: How long a shutdown waits for the local workers to fall silent.
_SILENCE_WAIT_S = 2.0


def device_workers(devices: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``SpecCluster`` worker specs: one single-threaded worker per OpenCL device selector
    (``PLATFORM:DEVICE``, e.g. ``nvidia:0``; a selector may repeat: workers sharing a
    device), each with its device in :data:`DEVICE_ENV`, the resource ``GPU=1`` and the
    local workers' preload (:data:`WORKER_SETUP`)."""
    return {
        f"device-{i}": {
            "cls": Nanny,
            "options": {
                "nthreads": 1,
                "host": "127.0.0.1",
                "env": {DEVICE_ENV: str(selector)},
                "resources": {DEVICE_RESOURCE: 1},
                "silence_logs": logging.WARNING,
                "preload": [WORKER_SETUP],
            },
        }
        for i, selector in enumerate(devices)
    }


@contextmanager
def dask_client(
    scheduler: str | None = None,
    workers: int | None = None,
    *,
    devices: Sequence[str] | None = None,
) -> Iterator[Client]:
    """A client of an existing scheduler (``tcp://HOST:PORT``) or of a new local cluster.

    Args:
        scheduler: the address of a running scheduler; None starts a local cluster.
        workers: local worker processes (default: ``os.cpu_count()``, or one per device).
        devices: OpenCL device selectors, one local worker each (see
            :func:`device_workers`).

    Raises:
        ConfigError: ``devices`` with a scheduler, or with another number of workers.
        GPAutotuneError: the scheduler cannot be reached.
    """
    restore: Callable[[], None] | None = None  # Dask's logging, silenced by an exception
    if scheduler is not None:
        if devices:
            raise ConfigError(
                f"devices are chosen when the workers of {scheduler} are started "
                f"({DEVICE_ENV}=PLATFORM:DEVICE dask worker ... --resources {DEVICE_RESOURCE}=1)"
            )
        try:
            client = Client(scheduler, timeout="20s")
        except ValueError as exc:  # a malformed address, e.g. no port
            raise ConfigError(
                f"the Dask scheduler address {scheduler!r} is malformed ({exc}); "
                "give tcp://HOST:PORT"
            ) from None
        except (OSError, TimeoutError) as exc:
            raise GPAutotuneError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
        try:
            yield client
        except BaseException:
            restore = silence_distributed()  # this process only: the workers are not ours
            raise
        finally:
            try:
                client.close()
            finally:
                if restore is not None:
                    restore()
        return
    if devices and workers is not None and workers != len(devices):
        raise ConfigError(f"{workers} workers for {len(devices)} devices: give one number")
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    # Non-daemonic workers (restarted ones too) may start processes of their own; the
    # setting holds while the client is open (other local clusters started then too).
    with dask.config.set({"distributed.worker.daemon": False}):
        try:
            cluster = _local_cluster(workers or os.cpu_count() or 1, devices)
        except RuntimeError as exc:  # a worker process that could not start
            raise GPAutotuneError(
                f"the local Dask cluster did not start ({exc}); a script that starts one "
                '(workers=...) needs an `if __name__ == "__main__":` guard around it, as '
                "with multiprocessing: each worker process imports the script again"
            ) from exc
        try:
            with Client(cluster) as client:
                try:
                    yield client
                except BaseException:
                    restore = _silence_shutdown(client)
                    raise
        finally:
            try:
                cluster.close()
            finally:
                if restore is not None:
                    restore()


def _silence_shutdown(client: Client) -> Callable[[], None]:
    """Silence Dask's logging here and in the local workers before a shutdown that an
    exception (an interrupt) forced; returns what restores it here (the workers end)."""
    restore = silence_distributed()
    try:  # bounded: a worker stuck in native code must not hold up the interrupt
        client.sync(
            client._run, silence_worker, on_error="ignore", callback_timeout=_SILENCE_WAIT_S
        )
    except Exception as exc:  # noqa: BLE001 - a worker that stays loud is only noise
        _log.debug("could not silence the workers: %s", exc)
    return restore


def _local_cluster(workers: int, devices: Sequence[str] | None) -> SpecCluster:
    if devices:
        return SpecCluster(
            silence_logs=logging.WARNING,
            workers=device_workers(devices),
            scheduler={
                "cls": Scheduler,
                "options": {"host": "127.0.0.1", "dashboard_address": ":0"},
            },
        )
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        preload=[WORKER_SETUP],
    )
