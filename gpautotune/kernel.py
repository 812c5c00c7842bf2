"""``tune_kernel``: tune your own kernel in one call, in the style of Kernel Tuner.

The API layer above :mod:`gpautotune.problems.kernel`: builds the problem and runs
:func:`gpautotune.tune` on it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from gpautotune.exceptions import ConfigError, unknown_options
from gpautotune.strategies import Strategy

__all__ = ["tune_kernel"]


def _whole(size: Any) -> int:
    """A problem size given as a number, as an int (1000.0 is 1000; 1000.7 is refused).

    Raises:
        ConfigError: not a whole number.
    """
    try:
        whole = int(size)
        exact = whole == size
    except (TypeError, ValueError, OverflowError):
        exact = False
    if isinstance(size, bool) or not exact:
        raise ConfigError(f"problem_size: {size!r} is not a whole number of work items")
    return whole


def _problem(
    lang: str,
    kernel_name: str,
    kernel_source: str | Path,
    problem_size: Any,
    arguments: Any,
    tune_params: Mapping[str, Sequence[Any]],
    options: Mapping[str, Any],
) -> Any:
    from gpautotune.problems.kernel import c_kernel, opencl_kernel

    if lang not in ("opencl", "c"):
        raise ConfigError(f"lang must be 'opencl' or 'c', not {lang!r}")
    factory = opencl_kernel if lang == "opencl" else c_kernel
    fixed = {"source", "kernel", "arguments", "tune_params", "problem_size"}
    allowed = sorted(set(inspect.signature(factory).parameters) - fixed)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise unknown_options(f"tune_kernel ({lang})", unknown, allowed)
    common = {
        "source": str(kernel_source) if isinstance(kernel_source, Path) else kernel_source,
        "kernel": kernel_name,
        "arguments": arguments,
        "tune_params": tune_params,
    }
    if lang == "c":
        if problem_size is not None:
            raise ConfigError("problem_size applies to OpenCL kernels; give None for C")
        return c_kernel(**common, **options)
    if problem_size is None:
        raise ConfigError("an OpenCL kernel needs a problem_size (work per dimension)")
    if isinstance(problem_size, (list, tuple)):
        problem_size = [v if isinstance(v, str) else _whole(v) for v in problem_size]
    elif not isinstance(problem_size, str):
        problem_size = _whole(problem_size)
    return opencl_kernel(**common, problem_size=problem_size, **options)


def tune_kernel(
    kernel_name: str,
    kernel_source: str | Path,
    problem_size: int | str | Sequence[int | str] | None,
    arguments: Sequence[Any] | Mapping[str, Any],
    tune_params: Mapping[str, Sequence[Any]],
    *,
    lang: Literal["opencl", "c"] = "opencl",
    strategy: Strategy | str = "gpr",
    budget: int = 60,
    seed: int | None = None,
    storage: Any = None,
    callback: Callable[..., None] | None = None,
    **options: Any,
) -> Any:
    """Tune a kernel given as source and NumPy arguments; returns the :class:`TuneResult`.

    Every trial is in the journal (``storage``: a path makes the run resumable). The
    kernel runs in a worker process with a timeout (OpenCL) or in its own process (C).

    Args:
        kernel_name: the kernel (OpenCL) or function (C) to call.
        kernel_source: a file or the code; each tuning parameter becomes a ``#define``.
        problem_size: work per dimension (OpenCL; ``None`` for C): numbers or
            expressions over ``sizes`` and the parameters.
        arguments: NumPy arrays and scalars (``np.int32(n)``) in the kernel's order, a
            mapping name -> data, or YAML-style specs (``{"name": "a", "random": "n"}``).
        tune_params: parameter name -> list of values.
        lang: ``opencl`` or ``c``.
        strategy: a strategy or its registered name (``gpr``, ``random``, ...).
        budget: evaluations, failures included.
        seed: the run's seed.
        storage: the journal (a path, a :class:`~gpautotune.storage.Journal`, or None
            for memory).
        callback: ``callback(trial, run)`` after each stored trial.
        **options: the problem's other keys: ``restrictions``, ``answer`` (a list aligned
            with ``arguments``, a mapping, or a function of the argument list), ``atol``,
            ``rtol``, ``grid_div_x``/``_y``/``_z``, ``block_size_names``, ``sizes``,
            ``defines``, ``metrics``, ``objective``, ``higher_is_better``,
            ``iterations``, ``platform``, ``device``, ``build_options``, ``compiler``,
            ``cflags``, ``timeout_s``, ``allow_imports``
            (see :func:`~gpautotune.problems.kernel.opencl_kernel`).

    Raises:
        ConfigError: an unknown option or a bad description (the message names it).
        DeviceError: no OpenCL device matches.
    """
    from gpautotune.tuner import tune

    problem = _problem(
        lang, kernel_name, kernel_source, problem_size, arguments, tune_params, options
    )
    try:
        return tune(problem, strategy, budget, storage=storage, seed=seed, callback=callback)
    finally:
        problem.close()
