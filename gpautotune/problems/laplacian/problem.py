"""The Laplacian kernel as a problem: generate, build, check and time on an OpenCL device.

Use it through :class:`~gpautotune.execution.IsolatedEvaluator` (``problem.default_evaluator()``)
so that a hung kernel or a driver crash costs one trial::

    problem = LaplacianProblem(platform="pocl", sizes="small")
    result = tune(problem, "random", 60, evaluator=problem.default_evaluator())
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.execution import IsolatedEvaluator
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.problems.laplacian.generator import GeneratedKernel, generate_kernel
from gpautotune.problems.laplacian.runner import LaplacianRunner
from gpautotune.problems.laplacian.sizes import SizesLike, resolve_sizes
from gpautotune.problems.laplacian.space import laplacian_space
from gpautotune.problems.opencl import usable_device
from gpautotune.space import Config

__all__ = ["LaplacianProblem", "NAIVE_CONFIG", "K40C_OPTIMUM"]

#: One work item per pixel (its 3 components as scalars), ``int`` arithmetic, direct
#: loads, 256-wide work groups: the straightforward port of the C loop (seed 003 fig. 11.2).
NAIVE_CONFIG: Config = {
    "elements_number": 3,
    "y_component_number": 1,
    "vector_length": 1,
    "temporary_size": 4,
    "load_overlap": True,
    "threads_number": 256,
    "lws_y": 1,
}
#: The seeds' exhaustive optimum on the K40c (1.16501e-10 s/pixel).
K40C_OPTIMUM: Config = {
    "elements_number": 6,
    "y_component_number": 6,
    "vector_length": 1,
    "temporary_size": 2,
    "load_overlap": True,
    "threads_number": 1024,
    "lws_y": 2,
}


class LaplacianProblem(Problem):
    """Tune the generated Laplacian OpenCL kernel on a real device (seconds per pixel).

    The device is chosen when the problem is made (a missing runtime or device raises
    :class:`~gpautotune.exceptions.DeviceError`); the context, images and the copy-
    bandwidth probe are set up lazily (:meth:`prepare`), in the worker process when
    evaluated through :class:`~gpautotune.execution.IsolatedEvaluator`.

    Args:
        platform: OpenCL platform name substring or index (``"pocl"``, ``"nvidia"``, ``0``).
        device: device name substring or index within the platform.
        sizes: a preset (``"small"``, ``"thesis"``, ``"tiny"``) or sizes (``["640x360"]``,
            ``[[640, 360]]``).
        timeout_s: seconds one evaluation may take (used by :meth:`default_evaluator`).
        startup_timeout_s: seconds a new worker may take to start and prepare (device
            context, images, bandwidth probe).
        repeats: timed launches per image size (after one warm-up); the minimum counts.
        seed: seed of the random input images.
        register_rule: the register-footprint predicate of the space (``proxy``,
            ``slides``, ``none``).
        vector_recompute: the generator's ``vector_recompute`` for every configuration
            (true: the seeds' dataset), or None to tune it as an eighth factor.
    """

    name = "laplacian"
    measures_hardware = True
    report_metrics = ("bound_fraction", "copy_bandwidth_Bps")
    objective_unit = samples_unit = "s/pixel"

    def __init__(
        self,
        *,
        platform: str | int | None = None,
        device: str | int | None = None,
        sizes: SizesLike = "small",
        timeout_s: float = 60.0,
        startup_timeout_s: float = 300.0,
        repeats: int = 4,
        seed: int = 0,
        register_rule: Literal["proxy", "slides", "none"] = "proxy",
        vector_recompute: bool | None = True,
    ) -> None:
        self.vector_recompute = vector_recompute
        self.space = laplacian_space(register_rule, recompute_factor=vector_recompute is None)
        self.sizes = resolve_sizes(sizes)
        self.timeout_s, self.repeats, self.seed, self.register_rule = (
            float(timeout_s),
            int(repeats),
            int(seed),
            register_rule,
        )
        if not (0 < self.timeout_s < math.inf and 0 < startup_timeout_s < math.inf):
            raise ConfigError(
                f"laplacian: timeouts must be positive and finite, got timeout_s={timeout_s}, "
                f"startup_timeout_s={startup_timeout_s}"
            )
        if self.repeats < 1:
            raise ConfigError(f"laplacian: repeats must be at least 1, got {repeats}")
        self.startup_timeout_s = float(startup_timeout_s)
        self.device_info = usable_device(platform, device)
        self._runner: LaplacianRunner | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_runner"] = None  # device objects stay in the process that made them
        del state["space"]  # compiled predicates do not pickle; rebuilt from register_rule
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.space = laplacian_space(
            self.register_rule, recompute_factor=self.vector_recompute is None
        )

    def prepare(self) -> None:
        """Open the device, upload the images, measure the copy bandwidth (once)."""
        if self._runner is None:
            self._runner = LaplacianRunner(
                self.device_info, self.sizes, repeats=self.repeats, seed=self.seed
            )

    def kernel(self, config: Mapping[str, Any]) -> GeneratedKernel:
        """The generated kernel of a configuration (the source is kept with its measurement)."""
        if self.vector_recompute is not None:
            config = {**config, "vector_recompute": self.vector_recompute}
        return generate_kernel(config)

    def evaluate(self, config: Config) -> Measurement:
        try:
            config = self.space.validate(config)
            kernel = self.kernel(config)
        except SpaceError as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        self.prepare()
        assert self._runner is not None
        return self._runner.measure(kernel)

    def baseline(self) -> Config:
        return dict(NAIVE_CONFIG)

    def default_evaluator(self) -> IsolatedEvaluator:
        """A worker-process evaluator with this problem's timeout."""
        return IsolatedEvaluator(timeout_s=self.timeout_s, startup_timeout_s=self.startup_timeout_s)

    def describe(self) -> dict[str, Any]:
        d = self.device_info
        return {
            "name": self.name,
            "platform": d.platform,
            "device": d.device,
            "driver_version": d.driver_version,
            "sizes": [list(s) for s in self.sizes],
            "repeats": self.repeats,
            "seed": self.seed,
            "register_rule": self.register_rule,
            # only when not the seeds' default, so that earlier runs keep their keys
            **(
                {} if self.vector_recompute is True else {"vector_recompute": self.vector_recompute}
            ),
        }

    def close(self) -> None:
        """Release the device buffers of this process."""
        if self._runner is not None:
            self._runner.close()
            self._runner = None
