"""Helpers of the fault-injection suite: scripts to run as tuners, process checks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]

#: A tuner whose evaluations spin forever in an isolated worker (pure Python, or a
#: compiled program through the SPAPT runner with ``c``); the worker writes its pid.
SPINNING_TUNER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from gpautotune.execution import IsolatedEvaluator
    from gpautotune.problems import Measurement, Problem
    from gpautotune.space import IntRange, Space
    from gpautotune.tuner import tune

    SPIN_C = "int main(void) { volatile unsigned long i = 0; for (;;) i++; return 0; }"

    class Spin(Problem):
        name = "spin"

        def __init__(self, marker, compiled):
            self.marker, self.compiled = marker, compiled
            self.space = Space([IntRange("x", 0, 3)])

        def evaluate(self, config):
            Path(self.marker).write_text(str(os.getpid()))
            if self.compiled:
                from gpautotune.problems.spapt import BuildSettings, Runner

                runner = Runner(BuildSettings(cflags=("-O0",), run_timeout_s=3600))
                runner.measure(SPIN_C, [], 1)
            while True:
                pass

    if __name__ == "__main__":
        problem = Spin(sys.argv[1], sys.argv[2] == "c")
        tune(problem, "random", 4, seed=0, evaluator=IsolatedEvaluator(timeout_s=3600))
    """
)


#: A C function that never returns, and a tuning file for it (c-kernel, compiled and run
#: in the tuner's process tree) and an OpenCL kernel that never ends (opencl-kernel, in
#: an isolated worker).
SPIN_C = "void spin(float *c, int n) { volatile unsigned long i = 0; for (;;) i++; }\n"
SPIN_CL = """__kernel void spin(__global float *c, const int n) {
  volatile int i = 0;
  while (c[0] >= 0.0f) { i++; }
}
"""
SPIN_YAML = """problem:
  name: {kind}
  source: {source}
  kernel: spin
  sizes: {{n: 64}}
  arguments:
    - {{name: c, zeros: n}}
    - {{name: n, value: n, dtype: int32}}
  tune_params: {{u: [1, 2, 4]}}
  timeout_s: 3600
{extra}strategy: {{name: random}}
budget: 3
seed: 1
storage: spin.db
"""


def spin_config(folder: Path, kind: str) -> Path:
    """A tuning file whose every evaluation spins forever (``c-kernel`` or ``opencl-kernel``)."""
    source = folder / ("spin.c" if kind == "c-kernel" else "spin.cl")
    source.write_text(SPIN_C if kind == "c-kernel" else SPIN_CL)
    extra = "  problem_size: n\n  block_size_names: [u]\n" if kind == "opencl-kernel" else ""
    config = folder / "spin.yaml"
    config.write_text(SPIN_YAML.format(kind=kind, source=source.name, extra=extra))
    return config


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def start_python(script: Path, *args: str) -> subprocess.Popen:
    """Run a script with this checkout first on the path."""
    return subprocess.Popen([sys.executable, str(script), *args], env=env(), cwd=script.parent)


def start_cli(folder: Path, *args: str) -> subprocess.Popen:
    """Run ``python -m gpautotune ARGS`` in ``folder`` with this checkout first on the path."""
    return subprocess.Popen(
        [sys.executable, "-m", "gpautotune", *args],
        env=env(),
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def runs_program(pid: int, name: str) -> bool:
    """Whether a descendant of ``pid`` runs the program ``name`` (descendants that end
    while they are looked at, a compiler's passes say, are skipped)."""
    for child in descendants(pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.name() == name:
                return True
    return False


def gone(pid: int) -> bool:
    """Whether a process no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)
