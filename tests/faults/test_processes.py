"""Fault injection: processes die with the tuner that started them, folders go with them.

A tuner killed while an evaluation spins — in an isolated Python worker, in a compiled
program (c-kernel, SPAPT), in an OpenCL kernel — must leave no process behind: checked
by pid, for ``kill -9`` and for SIGTERM. Temporary folders are removed on SIGTERM; after
``kill -9`` (no cleanup can run) the next folder made on the machine removes them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

import psutil
import pytest

from gpautotune.execution import IsolatedEvaluator, owned_temp_folder
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.space import IntRange, Space
from gpautotune.tuner import tune
from tests.faults.processes import (
    SPINNING_TUNER,
    descendants,
    gone,
    runs_program,
    spin_config,
    start_cli,
    start_python,
    wait_for,
)

WORKER_PREFIX, SPAPT_PREFIX = "gpautotune-worker-", "gpautotune-spapt-"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _folders(prefix: str, pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"{prefix}{pid}-*"))


def _swept(prefix: str, left: list[Path]) -> bool:
    """Whether making a new folder of ``prefix`` removed the orphans ``left``."""
    owned_temp_folder(prefix).rmdir()
    return bool(left) and not any(p.exists() for p in left)


@pytest.fixture(autouse=True)
def _no_leftovers():
    """Whatever a failing test leaves running is killed with its whole tree."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    for p in psutil.Process().children(recursive=True):
        if p.pid not in before:
            for q in [*descendants(p.pid), p]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    q.kill()


def _kill_and_check(tuner, family: list[int], how: signal.Signals) -> None:
    tuner.send_signal(how)
    tuner.wait(30)
    wait_for(lambda: all(gone(pid) for pid in family), 10, f"processes {family} to end")


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_kill_9_of_a_tuner_ends_its_spinning_worker(tmp_path, compiled) -> None:
    """The library's tuner with an isolated worker that spins in Python, or that spins in
    a compiled program it started (SPAPT runner): kill -9 of the tuner ends them all; the
    worker's folder (the program's inside it) goes when the next one is made."""
    if compiled and shutil.which("gcc") is None:
        pytest.skip("needs gcc to build the spinning program")
    script, marker = tmp_path / "spin.py", tmp_path / "worker.pid"
    script.write_text(SPINNING_TUNER)
    tuner = start_python(script, str(marker), "c" if compiled else "py")
    wait_for(marker.exists, 60, "the worker to start evaluating")
    worker = int(marker.read_text())
    if compiled:
        wait_for(lambda: runs_program(worker, "kernel"), 60, "program")
    family = [worker, *(c.pid for c in descendants(worker))]
    _kill_and_check(tuner, family, signal.SIGKILL)
    left = _folders(WORKER_PREFIX, tuner.pid)  # the program's folder is in the worker's
    assert not compiled or any(left[0].glob(f"{SPAPT_PREFIX}{worker}-*"))
    assert _swept(WORKER_PREFIX, left)


@pytest.mark.slow
@needs_gcc
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_the_cli_killed_while_a_c_kernel_spins_leaves_nothing(tmp_path, how) -> None:
    tuner = start_cli(tmp_path, "tune", str(spin_config(tmp_path, "c-kernel")))
    wait_for(lambda: runs_program(tuner.pid, "kernel"), 120, "kernel")
    family = [c.pid for c in descendants(tuner.pid)]
    _kill_and_check(tuner, family, how)
    left = _folders(SPAPT_PREFIX, tuner.pid)
    if how == signal.SIGTERM:
        assert tuner.returncode == 128 + signal.SIGTERM and left == []
        assert "Traceback" not in tuner.stderr.read()
    else:
        assert _swept(SPAPT_PREFIX, left)


def _opencl_device() -> None:
    from gpautotune.exceptions import DeviceError
    from gpautotune.problems.opencl import select_device

    try:
        select_device()
    except (DeviceError, ImportError) as exc:
        pytest.skip(f"no OpenCL device can build kernels here: {exc}")


@pytest.mark.slow
def test_sigterm_of_the_cli_while_an_opencl_kernel_spins_ends_the_worker(tmp_path) -> None:
    """The defect as reported: a kernel spinning in the isolated worker, the tuner ended."""
    _opencl_device()
    tuner = start_cli(tmp_path, "tune", str(spin_config(tmp_path, "opencl-kernel")))

    def workers() -> list[psutil.Process]:
        return [p for p in descendants(tuner.pid) if "spawn_main" in " ".join(p.cmdline())]

    wait_for(workers, 60, "the worker")
    worker = workers()[0]

    def spinning() -> bool:  # past start-up (about 1.5 s of CPU) and the build
        times = worker.cpu_times()
        return times.user + times.system > 4.0

    wait_for(spinning, 120, "the kernel to spin")
    _kill_and_check(tuner, [p.pid for p in descendants(tuner.pid)] or [worker.pid], signal.SIGTERM)
    assert _folders(WORKER_PREFIX, tuner.pid) == []


class SpinsOnce(Problem):
    """Spins at x == 2 (until killed; it writes its pid to ``marker`` first); elsewhere
    returns x + 1 and the worker pid."""

    name = "spins-once"

    def __init__(self, marker: Path) -> None:
        self.space = Space([IntRange("x", 0, 5)])
        self.marker = marker

    def evaluate(self, config):
        if config["x"] == 2:
            self.marker.write_text(str(os.getpid()))
            while True:
                pass
        return Measurement.success(float(config["x"]) + 1.0, pid=os.getpid())


@pytest.mark.slow
def test_a_worker_killed_mid_evaluation_costs_one_trial(tmp_path) -> None:
    """Something kills the worker while it evaluates: that trial is a run_error, the run
    goes on in a new worker, and the killed worker's temporary folder is gone."""
    evaluator = IsolatedEvaluator(timeout_s=120)
    marker = tmp_path / "spinning"
    folders: list[str | None] = []

    def killer() -> None:
        wait_for(marker.exists, 120, "the spinning evaluation")
        folders.append(evaluator._tmp)
        os.kill(int(marker.read_text()), signal.SIGKILL)

    watcher = threading.Thread(target=killer, daemon=True)
    watcher.start()
    result = tune(
        SpinsOnce(marker), "sobol", 6, seed=0, evaluator=evaluator, storage=tmp_path / "j.db"
    )
    watcher.join(30)
    killed = int(marker.read_text())
    statuses = {t.config["x"]: t.status for t in result.trials}
    assert statuses.pop(2) is Status.RUN_ERROR and set(statuses.values()) == {Status.OK}
    after = [
        t
        for t in result.trials
        if t.number > next(t.number for t in result.trials if t.config["x"] == 2)
    ]
    assert after and all(t.measurement.metrics["pid"] != killed for t in after)
    assert gone(killed) and folders and not os.path.exists(folders[0])
