"""The ``opencl-kernel`` and ``c-kernel`` problems by name, with the keys of a YAML file.

A tuning file (a relative path, of ``source`` or a ``file``, is looked for in the working
directory, then in the YAML file's folder; see :mod:`gpautotune.problems.input_files`)::

    problem:
      name: opencl-kernel
      source: configs/kernels/vadd.cl       # a file, or the code itself
      kernel: vadd                          # the __kernel function
      sizes: {n: 1000000}                   # names usable in every expression
      problem_size: n                       # or [n, m]: work per dimension
      arguments:                            # in the kernel's order
        - {name: c, zeros: n}
        - {name: a, random: n}
        - {name: b, random: n}
        - {name: n, value: n, dtype: int32}
      tune_params: {block_size_x: [32, 64, 128, 256, 512, 1024]}
      restrictions: []                      # constraint expressions over parameters
      answer: {c: "a + b"}                  # expressions, {file: x.npy}, or module:function
      metrics: {GB/s: "3 * 4 * n / time / 1e9"}
      objective: GB/s                       # default: time (seconds)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from gpautotune.problems.input_files import InputFile
from gpautotune.problems.kernel._c import CKernelProblem
from gpautotune.problems.kernel._geometry import Divisor, geometry
from gpautotune.problems.kernel._opencl import OpenCLKernelProblem
from gpautotune.problems.kernel._spec import KernelSpec, kernel_spec
from gpautotune.problems.kernel._usage import warn_unused_parameters

__all__ = ["opencl_kernel", "c_kernel"]

_SPEC_KEYS = tuple(inspect.signature(kernel_spec).parameters)


def _spec(options: Mapping[str, Any]) -> KernelSpec:
    """The :class:`KernelSpec` of a factory's keyword arguments (its ``locals()``)."""
    return kernel_spec(**{k: options[k] for k in _SPEC_KEYS})


def opencl_kernel(
    source: Annotated[str, InputFile(code=True)],
    kernel: str,
    arguments: Annotated[list[dict[str, Any]], InputFile("*.file")],
    tune_params: dict[str, list[Any]],
    problem_size: int | str | list[int | str],
    *,
    restrictions: list[str] | str | None = None,
    sizes: dict[str, int] | None = None,
    grid_div_x: Divisor = None,
    grid_div_y: Divisor = None,
    grid_div_z: Divisor = None,
    block_size_names: list[str] | None = None,
    defines: dict[str, Any] | None = None,
    answer: Annotated[dict[str, Any] | str | None, InputFile("*.file")] = None,
    atol: float = 1e-6,
    rtol: float = 0.0,
    objective: str = "time",
    metrics: dict[str, str] | None = None,
    higher_is_better: bool | None = None,
    iterations: int = 7,
    seed: int = 0,
    platform: str | int | None = None,
    device: str | int | None = None,
    build_options: str = "",
    timeout_s: float = 60.0,
    startup_timeout_s: float = 300.0,
    probe_bandwidth: bool = True,
    allow_imports: bool = False,
) -> OpenCLKernelProblem:
    """A user's OpenCL kernel (problem ``opencl-kernel``); the keys of the YAML section.

    Args:
        source: the kernel file or its code; a relative path is from the working
            directory (in a YAML file: else from the file's folder).
        kernel: the ``__kernel`` function's name.
        arguments: the kernel's arguments in order (see
            :mod:`gpautotune.problems.kernel._arguments`).
        tune_params: parameter name -> values; each becomes a ``#define``. A name that
            occurs nowhere in the source nor in these expressions gets a warning (a
            misspelt name makes every build fail, or every build the same).
        problem_size: work per dimension (expressions over sizes and parameters).
        restrictions: constraint expressions over the parameters (one string is one
            restriction; in Python, functions of the parameters work too).
        sizes: named whole numbers used by shapes and expressions (``{n: 4096}``).
        grid_div_x: divisor of the problem size in x (default: the local size); an
            expression or a list of names multiplied together. Likewise y and z.
        block_size_names: the parameters giving the local size per dimension.
        defines: extra ``#define``s, expressions over sizes and parameters.
        answer: expected outputs (expressions, ``{file: ...}``) or ``module:function``.
        atol: absolute tolerance of the check.
        rtol: relative tolerance of the check.
        objective: ``time`` (seconds) or the name of a metric.
        metrics: name -> expression over ``time`` (s), sizes and parameters.
        higher_is_better: whether the objective metric is to be maximised (default: yes
            for a metric, no for time).
        iterations: timed launches after the checked one; the fastest counts.
        seed: seed of the ``random`` arguments.
        platform: OpenCL platform name substring or index.
        device: device name substring or index (``NVIDIA``, ``H100``).
        build_options: OpenCL compiler options.
        timeout_s: seconds one evaluation may take (the worker is then killed).
        startup_timeout_s: seconds a new worker may take to start and prepare (device
            context, arguments, answer, bandwidth probe).
        probe_bandwidth: measure the device's copy bandwidth once (a metric).
        allow_imports: the user's opt-in to ``module:function`` names (never from a file).
    """
    spec = _spec(locals())
    shape = geometry(
        problem_size,
        (grid_div_x, grid_div_y, grid_div_z),
        block_size_names,
        [*spec.sizes, *spec.space.names],
    )
    problem = OpenCLKernelProblem(
        spec,
        shape,
        platform=platform,
        device=device,
        build_options=build_options,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        probe_bandwidth=probe_bandwidth,
    )
    warn_unused_parameters(spec, shape)  # once the set-up is accepted
    return problem


def c_kernel(
    source: Annotated[str, InputFile(code=True)],
    kernel: str,
    arguments: Annotated[list[dict[str, Any]], InputFile("*.file")],
    tune_params: dict[str, list[Any]],
    *,
    restrictions: list[str] | str | None = None,
    sizes: dict[str, int] | None = None,
    defines: dict[str, Any] | None = None,
    answer: Annotated[dict[str, Any] | str | None, InputFile("*.file")] = None,
    atol: float = 1e-6,
    rtol: float = 0.0,
    objective: str = "time",
    metrics: dict[str, str] | None = None,
    higher_is_better: bool | None = None,
    iterations: int = 7,
    seed: int = 0,
    compiler: str = "gcc",
    cflags: Sequence[str] = ("-O3",),
    timeout_s: float = 60.0,
    allow_imports: bool = False,
) -> CKernelProblem:
    """A user's C function (problem ``c-kernel``); the keys of the YAML section.

    The same keys as :func:`opencl_kernel` without the work geometry and the device
    (``kernel`` is the C function's name), plus:

    Args:
        compiler: the C compiler command.
        cflags: its flags (``-O3`` by default; add ``-march=native``, ``-fopenmp``).
        timeout_s: seconds a compilation, and a run, may take (then killed: ``timeout``).
    """
    spec = _spec(locals())
    problem = CKernelProblem(spec, compiler=compiler, cflags=tuple(cflags), timeout_s=timeout_s)
    warn_unused_parameters(spec)  # once the set-up is accepted
    return problem
