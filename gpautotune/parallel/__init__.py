"""Asynchronous parallel tuning: one run, many evaluations in flight, on Dask.

:func:`run_parallel` is the loop (ask as slots free up, the configurations in flight
passed to the strategy as pending); :class:`DaskWorkers` evaluates on a Dask cluster
(:func:`dask_client`: a local one, one worker per OpenCL device, or an existing
scheduler); :class:`SimulatedWorkers` replays the same loop in simulated time.
``tune(..., workers=N)`` and ``gpautotune tune FILE --workers N`` use them.
"""

from gpautotune.parallel._cluster import DEVICE_RESOURCE, dask_client, device_workers
from gpautotune.parallel._dask import DaskWorkers, problem_payload, tune_on_dask
from gpautotune.parallel._loop import Finished, Workers, run_parallel
from gpautotune.parallel._simulated import SimulatedWorkers

__all__ = [
    "DEVICE_RESOURCE",
    "DaskWorkers",
    "Finished",
    "SimulatedWorkers",
    "Workers",
    "dask_client",
    "device_workers",
    "problem_payload",
    "run_parallel",
    "tune_on_dask",
]
