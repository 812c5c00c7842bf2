"""Compile and run one generated program in isolated subprocesses (spec §4.1).

Each measurement gets a fresh directory; the compiler and the program run in their own
process group, killed whole when they exceed their time limit, and die with the process
that started them (:func:`~gpautotune.execution.parent_death_preexec`). The work
directory is named after that process (``gpautotune-spapt-<pid>-*``): a runner removes
the directories of processes that no longer exist (killed before they could clean up).
Outcomes map to the statuses of the specification: compiler error -> ``build_error``;
compile or run over its limit -> ``timeout``; exit status 1 after the validation message
-> ``wrong_result``; any other failure -> ``run_error``; otherwise ``ok`` with every
repetition's time.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gpautotune.execution import owned_temp_folder, parent_death_preexec
from gpautotune.measurement import Status
from gpautotune.problems.spapt._program import TIMER_SOURCE, VALIDATION_MARK

__all__ = ["BuildSettings", "PREFIX", "RunOutcome", "Runner"]

_log = logging.getLogger(__name__)
_TAIL = 20_000
#: Work directories are ``<PREFIX><pid>-*`` in the temporary folder.
PREFIX = "gpautotune-spapt-"


@dataclass(frozen=True)
class BuildSettings:
    """How programs are built and run.

    Attributes:
        compiler: the C compiler command.
        cflags: optimisation flags (the spec's ``-O3 -fopenmp``).
        libs: libraries linked after the objects.
        compile_timeout_s: limit on one compilation.
        run_timeout_s: limit on one program run (initialisation and all repetitions).
        omp_threads: ``OMP_NUM_THREADS`` for the runs; None keeps the environment's.
    """

    compiler: str = "gcc"
    cflags: tuple[str, ...] = ("-O3", "-fopenmp")
    libs: tuple[str, ...] = ("-lm",)
    compile_timeout_s: float = 300.0
    run_timeout_s: float = 600.0
    omp_threads: int | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What compiling and running one program gave."""

    status: Status
    times: tuple[float, ...] = ()
    checksum: float | None = None
    threads: int | None = None
    compile_s: float = 0.0
    run_s: float = 0.0
    log: str = ""


def _tail(text: str) -> str:
    return text if len(text) <= _TAIL else "...\n" + text[-_TAIL:]


def _execute(
    cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> tuple[int | None, str, str, float]:
    """Run ``cmd`` in its own process group; ``None`` as return code means killed at the limit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
        preexec_fn=parent_death_preexec(),
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return None, out, err, time.perf_counter() - t0


_LINE = re.compile(r"^(time|checksum|threads) (\S+)$", re.MULTILINE)


def _parse(stdout: str) -> tuple[list[float], float | None, int | None]:
    times: list[float] = []
    checksum = threads = None
    for key, value in _LINE.findall(stdout):
        if key == "time":
            times.append(float(value))
        elif key == "checksum":
            checksum = float(value)
        else:
            threads = int(value)
    return times, checksum, threads


class Runner:
    """Builds and runs programs under a work directory (created lazily, removed by close)."""

    def __init__(
        self, settings: BuildSettings, work_dir: str | os.PathLike[str] | None = None
    ) -> None:
        self.settings = settings
        self._own = work_dir is None
        self._root = Path(work_dir) if work_dir is not None else None
        self._timer: Path | None = None

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = owned_temp_folder(PREFIX)
        self._root.mkdir(parents=True, exist_ok=True)
        return self._root

    def timer_object(self) -> Path:
        """The clock, compiled once at ``-O0`` (kept out of the optimised unit)."""
        if self._timer is None or not self._timer.exists():
            src = self.root / "spapt_timer.c"
            src.write_text(TIMER_SOURCE)
            cmd = [self.settings.compiler, "-O0", "-c", src.name, "-o", "spapt_timer.o"]
            rc, _, err, _ = _execute(cmd, self.root, 120.0)
            if rc != 0:
                raise RuntimeError(f"cannot compile the timer with {cmd}: {err}")
            self._timer = self.root / "spapt_timer.o"
        return self._timer

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.settings.omp_threads is not None:
            env["OMP_NUM_THREADS"] = str(self.settings.omp_threads)
        return env

    def measure(self, source: str, args: list[str], repetitions: int) -> RunOutcome:
        """Compile ``source`` and run it with ``args``; never raises for the program's faults."""
        timer = self.timer_object()
        folder = Path(tempfile.mkdtemp(dir=self.root, prefix="m-"))
        try:
            (folder / "kernel.c").write_text(source)
            s = self.settings
            cmd = [
                s.compiler,
                *s.cflags,
                f"-DORIO_REPS={repetitions}",
                "-o",
                "kernel",
                "kernel.c",
                str(timer),
                *s.libs,
            ]
            rc, out, err, compile_s = _execute(cmd, folder, s.compile_timeout_s)
            if rc is None:
                return RunOutcome(
                    Status.TIMEOUT,
                    compile_s=compile_s,
                    log=f"compilation exceeded {s.compile_timeout_s:g} s\n{_tail(out + err)}",
                )
            if rc != 0:
                return RunOutcome(Status.BUILD_ERROR, compile_s=compile_s, log=_tail(out + err))
            return self._run(folder, args, repetitions, compile_s)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, folder: Path, args: list[str], repetitions: int, compile_s: float) -> RunOutcome:
        limit = self.settings.run_timeout_s
        rc, out, err, run_s = _execute(["./kernel", *args], folder, limit, self.env())
        times, checksum, threads = _parse(out)
        common = {
            "times": tuple(times),
            "checksum": checksum,
            "threads": threads,
            "compile_s": compile_s,
            "run_s": run_s,
        }
        if rc is None:
            return RunOutcome(
                Status.TIMEOUT, log=f"run exceeded {limit:g} s\n{_tail(err)}", **common
            )
        if rc == 1 and VALIDATION_MARK in err:
            return RunOutcome(Status.WRONG_RESULT, log=_tail(err), **common)
        if rc != 0:
            why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            return RunOutcome(Status.RUN_ERROR, log=f"{why}\n{_tail(err)}", **common)
        if len(times) != repetitions or not all(math.isfinite(t) for t in times):
            return RunOutcome(
                Status.RUN_ERROR, log=f"expected {repetitions} times, got {len(times)}", **common
            )
        return RunOutcome(Status.OK, **common)

    def close(self) -> None:
        """Remove the work directory if this runner created it."""
        if self._own and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            self._timer = None
