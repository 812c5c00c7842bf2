"""Kernel Tuner's random draws, private to the thread of each run.

Kernel Tuner's strategies draw from Python's ``random`` module and NumPy's global state.
Seeding those at the start of a run repeats it only while no other thread of the process
draws from them too; a Dask worker does (its event loop runs beside the repetition), so in
a comparison a run's draws interleaved with the worker's and a seed did not repeat its run
(``kt-pso`` on pnpoly/RTX_3090: 7 of 20 seeds ended elsewhere than in an earlier
comparison). :func:`install` points the names Kernel Tuner's modules draw through
(``random``, ``np``, and functions imported from ``random``) at stand-ins that answer a
thread holding private generators (:func:`private`) from those, and any other thread from
the global ones, so a strategy thread's draws are its own. No library offers this:
Kernel Tuner's strategies take no generator, and the standard library has no
thread-local random module.

Kernel Tuner's Latin hypercubes (``kt-bayes_opt``'s initial design, ``kt-diff_evo``'s
first population) are SciPy's ``LatinHypercube`` created without a generator, which
draws fresh entropy; SciPy's class is replaced by a subclass that, in a thread with
private generators and given none, takes one seeded from them (everywhere else it is
SciPy's class unchanged). What it cannot reach: SciPy's optimizers called without a seed
(``kt-basinhopping``, ``kt-dual_annealing``) draw from NumPy's global state, which the run
still seeds but another thread may draw from.
"""

from __future__ import annotations

import random
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["install", "private"]

_local = threading.local()


def private(seed: int | None) -> None:
    """Give the calling thread its own generators, seeded with ``seed`` (fresh entropy
    when ``None``): Python's (``random.Random``) and NumPy's legacy ``RandomState``, whose
    methods are those of ``np.random``'s module functions."""
    _local.python = random.Random(seed)
    _local.numpy = np.random.RandomState(None if seed is None else seed % 2**32)


def _python() -> Any:
    return getattr(_local, "python", None) or random


class _Random:
    """Stands in for the ``random`` module: the calling thread's generator, if it has one."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_python(), name)


class _NumpyRandom:
    """Stands in for ``np.random``: the calling thread's ``RandomState`` for what it
    offers, NumPy's module for the rest (``default_rng``, ``Generator``, ...)."""

    def __getattr__(self, name: str) -> Any:
        state = getattr(_local, "numpy", None)
        if state is not None and hasattr(state, name):
            return getattr(state, name)
        return getattr(np.random, name)


class _Numpy:
    """Stands in for ``numpy``: everything is NumPy's but ``random``."""

    random = _NumpyRandom()

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def _forward(name: str) -> Any:
    def draw(*args: Any, **kwargs: Any) -> Any:
        return getattr(_python(), name)(*args, **kwargs)

    draw.__name__ = name
    return draw


def _latin_hypercube() -> tuple[type, type]:
    """SciPy's ``LatinHypercube`` and its stand-in, which takes its generator from the
    calling thread's private ones when it is given none (fresh entropy elsewhere, as
    SciPy's own); the stand-in replaces SciPy's class in ``scipy.stats.qmc`` once."""
    from scipy.stats import qmc

    base = qmc.LatinHypercube
    if getattr(base, "_thread_private", False):
        return base.__bases__[0], base

    class LatinHypercube(base):  # type: ignore[misc, valid-type]
        __doc__ = base.__doc__
        _thread_private = True

        def __init__(self, d: int, *args: Any, **kwargs: Any) -> None:
            state = getattr(_local, "numpy", None)
            if state is not None and kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs["rng"] = np.random.default_rng(state.randint(2**32))
            super().__init__(d, *args, **kwargs)

    qmc.LatinHypercube = LatinHypercube  # also for imports inside functions
    return base, LatinHypercube


_RANDOM, _NUMPY, _NUMPY_RANDOM = _Random(), _Numpy(), _NumpyRandom()
_installed: set[str] = set()


def install(prefix: str = "kernel_tuner") -> None:
    """Point the random sources of every loaded module under ``prefix`` at the stand-ins
    (once per module; modules loaded later are patched by a later call)."""
    scipy_lhs, lhs = _latin_hypercube()
    for name, module in list(sys.modules.items()):
        if module is None or name in _installed or not name.startswith(prefix):
            continue
        for attr, value in list(vars(module).items()):
            if value is scipy_lhs:  # from scipy.stats.qmc import LatinHypercube
                setattr(module, attr, lhs)
            elif value is random:
                setattr(module, attr, _RANDOM)
            elif value is np:
                setattr(module, attr, _NUMPY)
            elif value is np.random:
                setattr(module, attr, _NUMPY_RANDOM)
            elif getattr(value, "__self__", None) is random._inst:  # from random import f
                setattr(module, attr, _forward(value.__name__))
        _installed.add(name)
