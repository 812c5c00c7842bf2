"""``opencl-kernel``: a user's OpenCL kernel, built per configuration, checked and timed.

Per evaluation: prepend the ``#define`` lines of the configuration, build (cached by
source), read the built kernel's launch limits and refuse a launch it cannot run
(``invalid``, metric ``refused_launch``), upload every array afresh, launch once and
compare the outputs with the answer, then time ``iterations`` launches by event
profiling; the fastest counts. Run through the isolated worker
(:meth:`default_evaluator`) so that a hung kernel costs one timeout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.problems import Measurement, Status
from gpautotune.problems.kernel._build_log import build_error_text
from gpautotune.problems.kernel._geometry import Geometry
from gpautotune.problems.kernel._params import define_lines
from gpautotune.problems.kernel._problem import KernelProblem
from gpautotune.problems.kernel._spec import KernelSpec
from gpautotune.problems.kernel._usage import check_kernel_name
from gpautotune.problems.opencl import (
    REFUSED_METRIC,
    BuildCache,
    BuildFailure,
    DeviceInfo,
    DeviceSession,
    LaunchLimits,
    measure_copy_bandwidth,
    open_device,
    timed_launch,
    usable_device,
)
from gpautotune.space import Config

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["OpenCLKernelProblem", "OpenCLKernelRunner"]

_PROBE_BYTES = 64 << 20


def _arity_mismatch(kernel: str, takes: int, given: Sequence[str]) -> str | None:
    """Why ``given`` (argument names) cannot be passed to a kernel of ``takes`` arguments."""
    if takes == len(given):
        return None
    return f"kernel {kernel} takes {takes} arguments; {len(given)} given ({', '.join(given)})"


class OpenCLKernelRunner:
    """The device side of :class:`OpenCLKernelProblem`: buffers, reference, launches.

    Args:
        spec: the kernel.
        info: the device.
        build_options: OpenCL compiler options.
        probe_bandwidth: measure the device's copy bandwidth once (metric
            ``copy_bandwidth_Bps``).
    """

    def __init__(
        self, spec: KernelSpec, info: DeviceInfo, build_options: str, probe_bandwidth: bool
    ) -> None:
        import pyopencl as cl

        self.spec, self.build_options = spec, build_options
        self.session = DeviceSession(info)
        self.host = spec.materialise()
        self.expected = spec.answer.expected(self.host, spec.sizes)
        mf = cl.mem_flags
        self.buffers = {
            name: cl.Buffer(self.session.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=v)
            for name, v in self.host.items()
            if isinstance(v, np.ndarray)
        }
        self.bandwidth = None
        if probe_bandwidth:
            cap = int(self.session.device.max_mem_alloc_size) // 2
            self.bandwidth = measure_copy_bandwidth(
                self.session.context, self.session.queue, min(cap, _PROBE_BYTES)
            ).bytes_per_s

    def metadata(self) -> dict[str, Any]:
        meta = self.session.metadata()
        if self.bandwidth is not None:
            meta["copy_bandwidth_Bps"] = self.bandwidth
        return meta

    def kernel(self, source: str, meta: dict[str, Any]) -> cl.Kernel | Measurement:
        """The built kernel, or a ``build_error`` measurement with the compiler's log (led
        by its first error line)."""
        import pyopencl as cl

        try:
            built = self.session.builds.build(source, self.build_options)
        except BuildFailure as exc:
            return Measurement.failure(Status.BUILD_ERROR, build_error_text(exc.log), **meta)
        meta.update(build_time_s=built.build_time_s, build_cached=built.cached)
        try:
            return cl.Kernel(built.program, self.spec.kernel)
        except cl.Error as exc:
            names = built.program.get_info(cl.program_info.KERNEL_NAMES)
            return Measurement.failure(
                Status.BUILD_ERROR,
                f"no kernel {self.spec.kernel!r} in the program (it has {names!r}): {exc}",
                **meta,
            )

    def arguments(self, scope: Mapping[str, Any]) -> tuple[list[Any], int]:
        """Kernel arguments (buffers, scalars, local memory) and the local bytes they take."""
        import pyopencl as cl

        args: list[Any] = []
        local = 0
        for i, arg in enumerate(self.spec.arguments):
            if arg.is_local:
                nbytes = arg.local_bytes(scope, f"arguments.{i} ({arg.name})")
                local += nbytes
                args.append(cl.LocalMemory(max(nbytes, 1)))
            else:
                args.append(self.buffers.get(arg.name, self.host[arg.name]))
        return args, local

    def run(
        self,
        kernel: cl.Kernel,
        global_size: tuple[int, ...],
        local_size: tuple[int, ...],
    ) -> tuple[dict[str, np.ndarray], list[float]]:
        """Upload every array, launch once and read the checked outputs back, then time
        ``iterations`` launches."""
        import pyopencl as cl

        queue = self.session.queue
        for name, buffer in self.buffers.items():
            cl.enqueue_copy(queue, buffer, self.host[name])
        timed_launch(queue, kernel, global_size, local_size)
        outputs = {name: np.empty_like(self.host[name]) for name in self.expected}
        for name, out in outputs.items():
            cl.enqueue_copy(queue, out, self.buffers[name])
        queue.finish()
        times = [
            timed_launch(queue, kernel, global_size, local_size)
            for _ in range(self.spec.iterations)
        ]
        return outputs, times

    def close(self) -> None:
        for buffer in self.buffers.values():
            buffer.release()
        self.buffers = {}


class OpenCLKernelProblem(KernelProblem):
    """A user's OpenCL kernel on one device (problem ``opencl-kernel``).

    Args:
        spec: the kernel (:func:`~gpautotune.problems.kernel.kernel_spec`).
        geometry: how work sizes follow from sizes and parameters.
        platform: OpenCL platform name substring or index (``"NVIDIA"``, ``"pocl"``).
        device: device name substring or index within the platform.
        build_options: OpenCL compiler options (``-cl-fast-relaxed-math``).
        timeout_s: seconds one evaluation may take in the worker process.
        probe_bandwidth: measure the device's copy bandwidth once (a metric).

    Raises:
        ConfigError: the source defines no ``__kernel`` function ``spec.kernel``
            (:func:`~gpautotune.problems.kernel._usage.check_kernel_name`).
    """

    name = "opencl-kernel"

    def __init__(
        self,
        spec: KernelSpec,
        geometry: Geometry,
        *,
        platform: str | int | None = None,
        device: str | int | None = None,
        build_options: str = "",
        timeout_s: float = 60.0,
        startup_timeout_s: float = 300.0,
        probe_bandwidth: bool = True,
    ) -> None:
        super().__init__(spec, timeout_s=timeout_s, startup_timeout_s=startup_timeout_s)
        check_kernel_name(spec, opencl=True, options=build_options.split())
        self.geometry, self.build_options = geometry, build_options
        self.probe_bandwidth = bool(probe_bandwidth)
        self.device_info = usable_device(platform, device)
        self._runner: OpenCLKernelRunner | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_runner"] = None  # device objects stay in the process that made them
        return state

    def prepare(self) -> None:
        """Open the device, make the arguments and the answer, upload them (once)."""
        if self._runner is None:
            self._runner = OpenCLKernelRunner(
                self.spec, self.device_info, self.build_options, self.probe_bandwidth
            )

    def source(self, config: Config) -> str:
        """The program of one configuration: its ``#define`` lines, then the kernel source."""
        defines = {**self.geometry.block_defines(config), **self.spec.define_values(config)}
        return f"{define_lines(defines)}#line 1\n{self.spec.source}"

    def check(self) -> None:
        """Check the set-up once, before tuning: problem sizes that the sizes alone fix,
        the arguments and the answer (made on the host), and, on one configuration built
        on the device, that the kernel exists and takes as many arguments as are given.

        Raises:
            ConfigError: the first mistake found, named.
        """
        self.geometry.check(self.spec.sizes, self.space.names)
        super().check()
        self._check_kernel()

    def _check_kernel(self) -> None:
        """Build one configuration in this process and compare its kernel's arguments with
        those given (nothing is launched; a configuration that does not build is left to
        its own trial)."""
        import pyopencl as cl

        try:
            config = self.space.sample(1, method="random", seed=0)[0]
            source = self.source(config)
        except (ConfigError, SpaceError):  # the run reports these configurations itself
            return
        try:
            device = open_device(self.device_info)
            built = BuildCache(cl.Context([device]), device).build(source, self.build_options)
        except (BuildFailure, cl.Error):  # left to the trials, which record why
            return
        try:
            kernel = cl.Kernel(built.program, self.spec.kernel)
        except cl.Error:
            names = built.program.get_info(cl.program_info.KERNEL_NAMES)
            raise ConfigError(
                f"kernel: no kernel {self.spec.kernel!r} in the program (it has {names!r})"
            ) from None
        mismatch = _arity_mismatch(self.spec.kernel, kernel.num_args, self.spec.argument_names)
        if mismatch is not None:
            raise ConfigError(f"arguments: {mismatch}")

    def _measure(self, config: Config) -> Measurement:
        global_size, local_size = self.geometry.sizes(self.spec.scope(config))
        source = self.source(config)
        self.prepare()
        runner = self._runner
        assert runner is not None
        meta = {
            **runner.metadata(),
            "global_size": list(global_size),
            "local_size": list(local_size),
        }
        kernel = runner.kernel(source, meta)
        if isinstance(kernel, Measurement):
            return kernel
        return self._launch(runner, kernel, config, global_size, local_size, meta)

    def _launch(
        self,
        runner: OpenCLKernelRunner,
        kernel: cl.Kernel,
        config: Config,
        global_size: tuple[int, ...],
        local_size: tuple[int, ...],
        meta: dict[str, Any],
    ) -> Measurement:
        import pyopencl as cl

        mismatch = _arity_mismatch(self.spec.kernel, kernel.num_args, self.spec.argument_names)
        if mismatch is not None:
            return Measurement.failure(Status.RUN_ERROR, mismatch, **meta)
        limits = LaunchLimits.of(kernel, runner.session.device)
        args, local_bytes = runner.arguments(self.spec.scope(config))
        meta.update(limits.as_metrics(), local_arg_bytes=local_bytes)
        refusal = limits.refusal(local_size, local_bytes)
        if refusal is not None:
            return Measurement.failure(
                Status.INVALID,
                f"refused before launch: {refusal}",
                **meta,
                **{REFUSED_METRIC: True},
            )
        try:
            kernel.set_args(*args)
            outputs, times = runner.run(kernel, global_size, local_size)
        except cl.Error as exc:
            return Measurement.failure(Status.RUN_ERROR, f"{type(exc).__name__}: {exc}", **meta)
        wrong = self._checked(outputs, runner.expected, meta)
        return wrong if wrong is not None else self._timed(config, times, meta)

    def describe(self) -> dict[str, Any]:
        d = self.device_info
        return {
            **super().describe(),
            "problem_size": list(self.geometry.problem_size),
            "grid_div": list(self.geometry.grid_div),
            "block_size_names": list(self.geometry.block_size_names),
            "platform": d.platform,
            "device": d.device,
            "driver_version": d.driver_version,
            "build_options": self.build_options,
        }

    def close(self) -> None:
        """Release the device buffers of this process."""
        if self._runner is not None:
            self._runner.close()
            self._runner = None
