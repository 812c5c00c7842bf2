"""Building OpenCL programs, cached in memory by source, options, device and driver.

PyOpenCL's own binary cache on disk is bypassed so that the recorded build time is the
driver's compile time (a driver may still keep its own cache, as PoCL does).
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["BuildCache", "BuildFailure", "BuiltProgram", "build_key"]


class BuildFailure(Exception):
    """A program did not compile; :attr:`log` holds the compiler's output."""

    def __init__(self, log: str) -> None:
        super().__init__(log)
        self.log = log


@dataclass(frozen=True)
class BuiltProgram:
    """A built program, how long its build took and whether it came from the cache."""

    program: cl.Program
    build_time_s: float
    cached: bool


def build_key(source: str, options: str, device: cl.Device) -> str:
    """SHA-256 of the source, the options and the device's name, version and driver."""
    parts = [
        source,
        options,
        device.name,
        device.version,
        device.driver_version,
        device.platform.version,
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class BuildCache:
    """Builds programs for one context and device, keeping the ``capacity`` latest.

    Args:
        context: the OpenCL context to build in.
        device: the device to build for.
        capacity: programs kept (least recently used dropped first).
    """

    def __init__(self, context: cl.Context, device: cl.Device, capacity: int = 32) -> None:
        self.context, self.device, self.capacity = context, device, capacity
        self._programs: OrderedDict[str, tuple[cl.Program, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._programs)

    def build(self, source: str, options: str = "") -> BuiltProgram:
        """The built program of ``source``; raises :class:`BuildFailure` with the build log."""
        key = build_key(source, options, self.device)
        if key in self._programs:
            self._programs.move_to_end(key)
            program, seconds = self._programs[key]
            return BuiltProgram(program, seconds, True)
        program, seconds = self._compile(source, options)
        self._programs[key] = (program, seconds)
        while len(self._programs) > self.capacity:
            self._programs.popitem(last=False)
        return BuiltProgram(program, seconds, False)

    def add(self, source: str, options: str, program: cl.Program, build_time_s: float) -> None:
        """Keep ``program``, built elsewhere (from a binary compiled in another process),
        as the build of ``source`` with ``options``; :meth:`build` then returns it with
        ``build_time_s`` as its compile time."""
        key = build_key(source, options, self.device)
        self._programs[key] = (program, float(build_time_s))
        self._programs.move_to_end(key)
        while len(self._programs) > self.capacity:
            self._programs.popitem(last=False)

    def _compile(self, source: str, options: str) -> tuple[cl.Program, float]:
        import pyopencl as cl

        program = cl.Program(self.context, source)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cl.CompilerWarning)
                program.build(options=options.split(), devices=[self.device], cache_dir=False)
        except cl.Error as exc:
            raise BuildFailure(_build_log(program, self.device) or str(exc)) from None
        return program, time.perf_counter() - t0


def _build_log(program: cl.Program, device: cl.Device) -> str:
    import pyopencl as cl

    try:
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", UserWarning
            )  # "pre-build attribute access": the build failed
            return str(program.get_build_info(device, cl.program_build_info.LOG)).strip()
    except cl.Error:
        return ""
