"""``SpaptProblem``: generate, compile, validate and time one SPAPT kernel configuration.

The measured value is the kernel's mean time over the repetitions of one program run (the
thesis' cost, the cold first repetition included); the raw times are the samples. The
baseline (every parameter at its minimum) is measured once per kernel, size and machine
and cached; each measurement reports ``speedup = baseline mean / mean`` in its metrics,
and is validated against the baseline's checksum.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import statistics
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.problems.spapt._baseline import BaselineCache, BaselineRecord
from gpautotune.problems.spapt._program import generate
from gpautotune.problems.spapt._runner import BuildSettings, Runner, RunOutcome
from gpautotune.problems.spapt._tile import TransformError
from gpautotune.problems.spapt.kernels import get_kernel
from gpautotune.space import Config, compile_expression

__all__ = ["SpaptProblem", "PRESETS"]

_log = logging.getLogger(__name__)
PRESETS = ("small", "thesis")
_SOURCE_LIMIT = 1_000_000


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _resolve_sizes(
    kernel_sizes: Mapping[str, Any],
    preset_sizes: Mapping[str, Any],
    overrides: Mapping[str, Any] | None,
    name: str,
) -> dict[str, Any]:
    sizes = dict(preset_sizes)
    for key, value in dict(overrides or {}).items():
        if key not in kernel_sizes:
            raise ConfigError(f"spapt/{name} has no size {key!r}; sizes: {sorted(kernel_sizes)}")
        if not _positive_int(value):
            raise ConfigError(f"spapt/{name}: size {key} must be a positive integer, got {value!r}")
        sizes[key] = value
    return sizes


class SpaptProblem(Problem):
    """One SPAPT kernel as a tuning problem (family ``spapt/<kernel>``).

    Args:
        variant: the kernel name (``bicg``, ``dgemv3``, ...; see :data:`KERNEL_NAMES`).
        preset: ``small`` (seconds per measurement on a small machine) or ``thesis``
            (the seeds' sizes; atax and bicg need ~13 GB, gemver and gesummv ~26 GB).
        sizes: overrides of individual size macros, e.g. ``{"N": 1000}``.
        compiler: the C compiler.
        cflags: compiler flags (``-O3 -fopenmp`` as in the thesis).
        repetitions: timed repetitions per program (default: the kernel's, 10).
        compile_timeout_s: limit on one compilation (beyond: ``timeout``).
        run_timeout_s: limit on one program run (beyond: ``timeout``).
        omp_threads: ``OMP_NUM_THREADS`` for the runs; None keeps the environment's.
        rtol: relative tolerance of the checksum against the baseline's; None takes the
            kernel's :attr:`Kernel.default_rtol`, the strictness of Orio's check at the
            thesis sizes (bit-identical for gemver, loose for the ratio checksums).
        orio_compat: reproduce Orio's failure regions (fixed OpenMP private lists, known
            generator/compiler failures as build errors) and its ``|delta| < 1`` check.
        cache_dir: folder of the baseline cache (default ``~/.cache/gpautotune/spapt``).
    """

    measures_hardware = True

    def __init__(
        self,
        variant: str = "bicg",
        *,
        preset: str = "small",
        sizes: Mapping[str, int] | None = None,
        compiler: str = "gcc",
        cflags: Sequence[str] = ("-O3", "-fopenmp"),
        repetitions: int | None = None,
        compile_timeout_s: float = 300.0,
        run_timeout_s: float = 600.0,
        omp_threads: int | None = None,
        rtol: float | None = None,
        orio_compat: bool = False,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if preset not in PRESETS:
            raise ConfigError(f"spapt: preset must be one of {PRESETS}, got {preset!r}")
        if repetitions is not None and repetitions < 1:
            raise ConfigError(f"spapt: repetitions must be >= 1, got {repetitions}")
        if omp_threads is not None and not _positive_int(omp_threads):
            raise ConfigError(
                f"spapt: omp_threads must be an integer >= 1 (or None), got {omp_threads!r}"
            )
        if rtol is not None and not float(rtol) >= 0:
            raise ConfigError(f"spapt: rtol must be >= 0, got {rtol}")
        if not (0 < compile_timeout_s < math.inf and 0 < run_timeout_s < math.inf):
            raise ConfigError(
                "spapt: time limits must be positive and finite, got "
                f"compile_timeout_s={compile_timeout_s}, run_timeout_s={run_timeout_s}"
            )
        if shutil.which(compiler) is None:
            raise ConfigError(f"spapt: the C compiler {compiler!r} is not on PATH")
        self.kernel = get_kernel(variant)
        self.name = f"spapt/{variant}"
        self.space = self.kernel.space
        self.preset = preset
        self.sizes = _resolve_sizes(self.kernel.sizes, self.kernel.preset(preset), sizes, variant)
        self.repetitions = repetitions or self.kernel.repetitions
        self.settings = BuildSettings(
            compiler,
            tuple(cflags),
            ("-lm",),
            float(compile_timeout_s),
            float(run_timeout_s),
            omp_threads,
        )
        self.rtol = self.kernel.default_rtol if rtol is None else float(rtol)
        self.orio_compat = bool(orio_compat)
        self.cache = BaselineCache(cache_dir)
        self.runner = Runner(self.settings)
        weakref.finalize(self, self.runner.close)
        self._baseline: BaselineRecord | None = None
        self._orio_failures = [
            (compile_expression(pred, self.space.names), message)
            for pred, message in self.kernel.orio_failures
        ]

    # ------------------------------------------------------------------ description
    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "preset": self.preset,
            "sizes": dict(self.sizes),
            "compiler": self.settings.compiler,
            "cflags": list(self.settings.cflags),
            "repetitions": self.repetitions,
            "omp_threads": self.settings.omp_threads,
            "rtol": self.rtol,
            "orio_compat": self.orio_compat,
        }

    def source(self, config: Config) -> str:
        """The C program of a configuration (raises for an invalid one)."""
        config = self.space.validate(config)
        return generate(
            self.kernel,
            config,
            self.sizes,
            repetitions=self.repetitions,
            orio_private=self.orio_compat,
        )

    # --------------------------------------------------------------------- baseline
    def _baseline_fields(self) -> dict[str, Any]:
        s = self.settings
        return {
            "kernel": self.kernel.name,
            "sizes": self.sizes,
            "compiler": s.compiler,
            "cflags": list(s.cflags),
            "libs": list(s.libs),
            "repetitions": self.repetitions,
            "omp_threads": s.omp_threads,
        }

    def baseline(self) -> Config:
        """The untransformed kernel: every parameter at its minimum (the problem contract's
        baseline configuration; :meth:`baseline_record` is its cached measurement)."""
        return dict(self.kernel.baseline)

    def check(self) -> None:
        """Measure the baseline (cached): a compiler that fails on it fails on everything.

        Raises:
            ConfigError: the baseline does not build or run (the first line of the log),
                or its checksum is not finite.
        """
        try:
            self.baseline_record()
        except (RuntimeError, OSError) as exc:
            lines = [x for x in str(exc).splitlines() if x.strip()]
            s = self.settings
            raise ConfigError(
                f"{self.name}: the baseline does not build or run with {s.compiler} "
                f"{' '.join(s.cflags)} ({' / '.join(lines[:2])[:300]}); fix the compiler or flags"
            ) from None

    def baseline_record(self, *, refresh: bool = False) -> BaselineRecord:
        """The baseline's measurement, made on first use and cached on disk.

        Raises:
            RuntimeError: the baseline itself fails to build or run (the message says why).
            ConfigError: the baseline's checksum is NaN or infinite (never cached).
        """
        if self._baseline is not None and not refresh:
            return self._baseline
        fields = self._baseline_fields()
        record = None if refresh else self.cache.get(fields)
        if record is None:
            record = self._measure_baseline()
            self._require_finite(record.checksum)  # before it is cached
            self.cache.put(fields, record)
        else:  # a record cached before the check
            self._require_finite(record.checksum)
        self._baseline = record
        return record

    def _measure_baseline(self) -> BaselineRecord:
        _log.info("measuring the baseline of %s at %s", self.name, self.sizes)
        outcome = self.runner.measure(self.source(self.kernel.baseline), [], self.repetitions)
        if outcome.status is not Status.OK or outcome.checksum is None:
            raise RuntimeError(
                f"the baseline of {self.name} failed ({outcome.status}): {outcome.log}"
            )
        return BaselineRecord(
            statistics.fmean(outcome.times),
            outcome.times,
            outcome.checksum,
            outcome.threads,
            outcome.compile_s,
            time.time(),
        )

    def _require_finite(self, checksum: float) -> None:
        """A NaN or infinite reference would make every configuration a wrong result."""
        if not math.isfinite(checksum):
            raise ConfigError(
                f"{self.name} at sizes {self.sizes}: the baseline's checksum is {checksum}, "
                "not finite, so no configuration can be validated against it; use larger sizes"
            )

    # ------------------------------------------------------------------- evaluation
    def _tolerances(self) -> tuple[float, float]:
        return (0.0, self.kernel.orio_atol) if self.orio_compat else (self.rtol, 0.0)

    def _orio_failure(self, config: Config) -> str | None:
        if not self._orio_failures:
            return None
        cols = self.space.columns(self.space.to_index([config]))
        for expr, message in self._orio_failures:
            if bool(expr(cols)[0]):
                return message
        return None

    def evaluate(self, config: Config) -> Measurement:
        try:
            config = self.space.validate(config)
        except SpaceError as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        common: dict[str, Any] = {"OMP_NUM_THREADS": self.runner.env().get("OMP_NUM_THREADS", "")}
        failure = self._orio_failure(config) if self.orio_compat else None
        if failure is not None:
            return Measurement.failure(Status.BUILD_ERROR, f"Orio fails here: {failure}", **common)
        try:
            source = generate(
                self.kernel,
                config,
                self.sizes,
                repetitions=self.repetitions,
                orio_private=self.orio_compat,
            )
        except (TransformError, ConfigError) as exc:
            return Measurement.failure(
                Status.BUILD_ERROR, f"code generation failed: {exc}", **common
            )
        try:
            base = self.baseline_record()
        except (RuntimeError, ConfigError) as exc:
            return Measurement.failure(Status.RUN_ERROR, str(exc), **common)
        rtol, atol = self._tolerances()
        outcome = self.runner.measure(
            source, [repr(base.checksum), repr(rtol), repr(atol)], self.repetitions
        )
        return self._measurement(outcome, base, source, common)

    def _measurement(
        self, outcome: RunOutcome, base: BaselineRecord, source: str, common: dict[str, Any]
    ) -> Measurement:
        metrics = {
            **common,
            "omp_num_threads": outcome.threads,
            "compile_s": outcome.compile_s,
            "run_s": outcome.run_s,
            "checksum": outcome.checksum,
            "reference": base.checksum,
            "baseline_s": base.mean_s,
        }
        if outcome.status is Status.OK:
            mean = statistics.fmean(outcome.times)
            return Measurement.success(mean, outcome.times, speedup=base.mean_s / mean, **metrics)
        kept = (
            source
            if len(source) <= _SOURCE_LIMIT
            else source[:_SOURCE_LIMIT] + "\n/* ...truncated */\n"
        )
        return Measurement.failure(
            outcome.status, outcome.log, times=list(outcome.times), source=kept, **metrics
        )

    def close(self) -> None:
        """Remove the temporary build folder."""
        self.runner.close()
