"""``c-kernel``: a user's C function, compiled per configuration with ``#define`` parameters.

The generated program is the configuration's ``#define`` lines, the user's source and a
``main`` that reads the array arguments from binary files, calls the function
``iterations`` times, timing each call with a monotonic clock, and writes the arrays the
answer checks after the first call. Compiling and running go through the SPAPT runner
(:class:`~gpautotune.problems.spapt.Runner`): own process group, killed at the time
limit (``timeout``), compiler errors as ``build_error`` with the log (led by its first
error line), crashes as ``run_error``. The outputs are then compared with the answer
(``wrong_result``).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.execution import Evaluator, InProcessEvaluator
from gpautotune.problems import Measurement, Status
from gpautotune.problems.kernel._arguments import C_TYPES
from gpautotune.problems.kernel._build_log import build_error_text
from gpautotune.problems.kernel._params import define_lines
from gpautotune.problems.kernel._problem import KernelProblem
from gpautotune.problems.kernel._spec import KernelSpec
from gpautotune.problems.kernel._usage import check_kernel_name
from gpautotune.problems.spapt import BuildSettings, Runner
from gpautotune.space import Config

__all__ = ["CKernelProblem", "harness"]

_HARNESS_HEAD = """\
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
"""

_HARNESS_MAIN = """
double spapt_now(void);

static void *gpautotune_read(const char *dir, const char *name, size_t bytes) {
  char path[4096];
  FILE *f;
  void *data = malloc(bytes ? bytes : 1);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "rb");
  if (!f || !data || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "gpautotune: cannot read %s\\n", path);
    exit(3);
  }
  fclose(f);
  return data;
}

static void gpautotune_write(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "gpautotune: cannot write %s\\n", path);
    exit(3);
  }
  fclose(f);
}

int main(int argc, char **argv) {
  int gpautotune_rep;
  if (argc < 3) {
    fprintf(stderr, "usage: %s INPUT_DIR OUTPUT_DIR\\n", argv[0]);
    return 2;
  }
@LOADS@
  for (gpautotune_rep = 0; gpautotune_rep < ORIO_REPS; gpautotune_rep++) {
    double gpautotune_start = spapt_now();
    @CALL@;
    double gpautotune_end = spapt_now();
    printf("time %.9f\\n", gpautotune_end - gpautotune_start);
    fflush(stdout);
    if (gpautotune_rep == 0) {
@WRITES@
    }
  }
  return 0;
}
"""


def _c_literal(value: np.generic) -> str:
    ctype = C_TYPES[str(np.dtype(value.dtype))]
    if value.dtype.kind == "f":
        number = float(value)
        text = (
            number.hex() if math.isfinite(number) else ("NAN" if math.isnan(number) else "INFINITY")
        )
        text = text if number >= 0 or not math.isinf(number) else "-INFINITY"
    else:
        text = str(int(value))
    return f"({ctype}) {text}"


def _check_c_types(host: Mapping[str, Any]) -> None:
    """Raise unless every argument value has a C type (``host``: values by name, in order).

    Raises:
        ConfigError: the first argument whose dtype is not in :data:`C_TYPES`, named.
    """
    for i, (name, value) in enumerate(host.items()):
        dtype = getattr(value, "dtype", None)
        if dtype is not None and str(dtype) not in C_TYPES:
            raise ConfigError(
                f"arguments.{i} ({name}): dtype {dtype} has no C type; use one of {sorted(C_TYPES)}"
            )


def harness(spec: KernelSpec, host: Mapping[str, Any], config: Config, checked: list[str]) -> str:
    """The C program of one configuration (``host``: argument values by name)."""
    loads, call, writes = [], [], []
    for i, (name, value) in enumerate(host.items()):
        if isinstance(value, np.ndarray):
            ctype = C_TYPES[str(value.dtype)]
            var = f"gpautotune_arg{i}"
            loads.append(
                f"  {ctype} *{var} = ({ctype} *) "
                f'gpautotune_read(argv[1], "{i}.bin", {value.nbytes}u);'
            )
            call.append(var)
            if name in checked:
                writes.append(
                    f'      gpautotune_write(argv[2], "{i}.bin", {var}, {value.nbytes}u);'
                )
        else:
            call.append(_c_literal(value))
    origin = Path(spec.source_path).name if spec.source_path else "kernel-source"
    main = (
        _HARNESS_MAIN.replace("@LOADS@", "\n".join(loads))
        .replace("@CALL@", f"{spec.kernel}({', '.join(call)})")
        .replace("@WRITES@", "\n".join(writes))
    )
    defines = define_lines(spec.define_values(config))
    return f'{_HARNESS_HEAD}{defines}#line 1 "{origin}"\n{spec.source}\n{main}'


class CKernelProblem(KernelProblem):
    """A user's C function, compiled and timed on this machine (problem ``c-kernel``).

    Args:
        spec: the kernel (:func:`~gpautotune.problems.kernel.kernel_spec`); ``kernel`` is
            the C function, called with the arguments in order (arrays as pointers).
        compiler: the C compiler command.
        cflags: compiler flags.
        timeout_s: seconds a compilation, and a run, may take.

    Raises:
        ConfigError: a set-up mistake: the source defines no function ``spec.kernel``
            (:func:`~gpautotune.problems.kernel._usage.check_kernel_name`), the compiler
            is not on ``PATH``, an argument is a local buffer.
    """

    name = "c-kernel"

    def __init__(
        self,
        spec: KernelSpec,
        *,
        compiler: str = "gcc",
        cflags: tuple[str, ...] = ("-O3",),
        timeout_s: float = 60.0,
    ) -> None:
        super().__init__(spec, timeout_s=timeout_s)
        check_kernel_name(spec, opencl=False, options=tuple(cflags))
        if shutil.which(compiler) is None:
            raise ConfigError(f"c-kernel: the C compiler {compiler!r} is not on PATH")
        local = [a.name for a in spec.arguments if a.is_local]
        if local:
            raise ConfigError(f"arguments {local}: local buffers exist only in OpenCL kernels")
        self.settings = BuildSettings(
            compiler, tuple(cflags), ("-lm",), self.timeout_s, self.timeout_s, None
        )
        self._inputs: tuple[dict[str, Any], dict[str, np.ndarray], Path] | None = None
        self._new_runner()

    def _new_runner(self) -> None:
        self.runner = Runner(self.settings)
        weakref.finalize(self, self.runner.close)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["runner"]  # a copy builds in its own folder
        state["_inputs"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._new_runner()

    def prepare(self) -> tuple[dict[str, Any], dict[str, np.ndarray], Path]:
        """Make the arguments and the answer, and write the arrays to the input folder (once).

        Raises:
            ConfigError: an argument or the answer cannot be made, or an argument has a
                dtype without a C type (the message names it).
        """
        if self._inputs is None:
            host, expected = self._host_values()
            _check_c_types(host)
            folder = self.runner.root / "inputs"
            folder.mkdir(parents=True, exist_ok=True)
            for i, value in enumerate(host.values()):
                if isinstance(value, np.ndarray):
                    (folder / f"{i}.bin").write_bytes(np.ascontiguousarray(value).tobytes())
            self._inputs = (host, expected, folder)
        return self._inputs

    def check(self) -> None:
        """Make the arguments and the answer (:meth:`prepare`), then build an empty program
        with the compiler and flags.

        Raises:
            ConfigError: an argument or the answer cannot be made or has no C type, or the
                compiler fails on the empty program (the first lines of its output).
        """
        self.prepare()
        outcome = self.runner.measure("int main(void) { return 0; }\n", [], 1)
        if outcome.status is Status.BUILD_ERROR:
            lines = [x for x in outcome.log.splitlines() if x.strip()]
            s = self.settings
            raise ConfigError(
                f"c-kernel: {s.compiler} {' '.join(s.cflags)} cannot build a program "
                f"({' / '.join(lines[:2])[:300]}); fix the compiler or flags"
            )

    def source(self, config: Config) -> str:
        """The C program of one configuration."""
        host, expected, _ = self.prepare()
        return harness(self.spec, host, config, list(expected))

    def _measure(self, config: Config) -> Measurement:
        source = self.source(config)
        host, expected, inputs = self.prepare()
        out = Path(tempfile.mkdtemp(dir=self.runner.root, prefix="out-"))
        try:
            outcome = self.runner.measure(source, [str(inputs), str(out)], self.spec.iterations)
            meta: dict[str, Any] = {"compile_s": outcome.compile_s, "run_s": outcome.run_s}
            if outcome.status is Status.BUILD_ERROR:  # what is wrong first, then the log
                return Measurement.failure(outcome.status, build_error_text(outcome.log), **meta)
            if outcome.status is not Status.OK:
                return Measurement.failure(outcome.status, outcome.log, **meta)
            outputs = self._read(out, host, expected)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        wrong = self._checked(outputs, expected, meta)
        return wrong if wrong is not None else self._timed(config, outcome.times, meta)

    @staticmethod
    def _read(
        folder: Path, host: Mapping[str, Any], expected: Mapping[str, Any]
    ) -> dict[str, np.ndarray]:
        names = list(host)
        return {
            name: np.fromfile(folder / f"{names.index(name)}.bin", dtype=host[name].dtype).reshape(
                host[name].shape
            )
            for name in expected
        }

    def default_evaluator(self) -> Evaluator:
        """In this process: the compiler and the program run in their own killed-at-the-
        limit process groups already."""
        return InProcessEvaluator()

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {**super().describe(), "compiler": s.compiler, "cflags": list(s.cflags)}

    def close(self) -> None:
        """Remove the build folder."""
        self.runner.close()
        self._inputs = None
