"""Asynchronous tuning on a real Dask cluster: workers, a worker killed mid-evaluation,
the tuner killed with ``kill -9`` and resumed (real processes)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from gpautotune.parallel import DaskWorkers, dask_client
from gpautotune.storage import Journal
from gpautotune.tuner import tune
from tests.comparison.faulty_problems import KillOnceBooth, SlowBooth

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2) as c:
        yield c


def _check_journal(db: Path, budget: int) -> list[dict]:
    """The run's trials: ``budget`` of them, numbered in order, no configuration twice,
    nothing left running; returns their configurations."""
    with Journal(db, read_only=True) as journal:
        (run,) = journal.runs()
        trials = journal.trials(run.id)
        assert journal.running(run.id) == [] and run.status == "finished"
    configs = [t.config for t in trials]
    assert [t.number for t in trials] == list(range(budget))
    assert len({tuple(sorted(c.items())) for c in configs}) == budget
    return configs


def test_evaluations_run_on_every_worker(tmp_path, client):
    db = tmp_path / "j.db"
    result = tune(SlowBooth(delay_s=0.2), "random", 10, seed=1, storage=db, client=client)
    _check_journal(db, 10)
    workers = {t.info["worker"] for t in result.trials}
    assert workers == set(client.scheduler_info(n_workers=-1)["workers"])
    # two at a time: evaluations overlap in time
    spans = sorted((t.started_at, t.started_at + t.duration_s) for t in result.trials)
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:], strict=False))


def test_a_problem_defined_in_a_function_travels_by_value(client):
    class LocalBooth(SlowBooth):  # plain pickle cannot send a class defined here
        name = "local-booth"

    result = tune(LocalBooth(delay_s=0.0), "random", 4, seed=1, client=client)
    assert result.used == 4 and all(t.ok for t in result.trials)


def test_a_worker_killed_mid_evaluation_loses_and_repeats_nothing(tmp_path, client):
    marker, db = tmp_path / "killed", tmp_path / "j.db"
    result = tune(
        KillOnceBooth(str(marker), after=3), "sobol", 10, seed=1, storage=db, client=client
    )
    assert marker.is_file()  # a worker did die in the middle of an evaluation
    configs = _check_journal(db, 10)
    reference = tune(KillOnceBooth(str(marker), after=3), "sobol", 10, seed=1)
    assert sorted(map(str, configs)) == sorted(str(t.config) for t in reference.trials)
    assert result.used == 10


TUNER = """
from gpautotune.tuner import tune
from tests.comparison.faulty_problems import SlowBooth
if __name__ == "__main__":
    tune(SlowBooth(delay_s=0.25), "sobol", {budget}, seed=4, storage={db!r}, workers=2)
"""


def _count(db: Path, table: str) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        return 0


def _running_configs(db: Path) -> list[str]:
    with Journal(db, read_only=True) as journal:
        return [str(r.config) for run in journal.runs() for r in journal.running(run.id)]


def test_a_tuner_killed_with_sigkill_resumes_with_nothing_lost_or_repeated(tmp_path):
    db, script = tmp_path / "j.db", tmp_path / "tuner.py"
    script.write_text(textwrap.dedent(TUNER.format(budget=24, db=str(db))))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    try:
        deadline = time.time() + 120

        def waiting() -> bool:  # until 6 are stored and one is in flight (the two workers'
            # evaluations take as long and may both end before the next is sent)
            return _count(db, "trials") < 6 or _count(db, "running_trials") == 0

        while waiting() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        family = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)  # the tuner only: its workers must end by themselves
        proc.wait()
        gone, alive = psutil.wait_procs(family, timeout=60)
        assert not alive, f"worker processes outlived the tuner: {alive}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    in_flight = _running_configs(db)
    stopped_at = _count(db, "trials")
    assert in_flight and 6 <= stopped_at < 24
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=300)
    configs = [str(c) for c in _check_journal(db, 24)]
    assert all(configs.count(c) == 1 for c in in_flight)
    whole = tune(SlowBooth(delay_s=0.0), "sobol", 24, seed=4)
    assert sorted(configs) == sorted(str(t.config) for t in whole.trials)


def _worker_setup(dask_worker) -> tuple[str | None, int]:
    from gpautotune.problems.opencl import DEVICE_ENV

    return os.environ.get(DEVICE_ENV), dask_worker.state.nthreads


def test_local_device_workers_get_their_device_and_a_gpu_resource():
    with dask_client(devices=["pocl:0", "pocl:1"]) as c:
        seen = c.run(_worker_setup)
        resources = [w["resources"] for w in c.scheduler_info(n_workers=-1)["workers"].values()]
    assert sorted(seen.values()) == [("pocl:0", 1), ("pocl:1", 1)]
    assert resources == [{"GPU": 1}, {"GPU": 1}]


def test_hardware_tasks_need_the_gpu_resource_of_device_workers(tmp_path):
    problem = SlowBooth(delay_s=0.1, hardware=True)
    with dask_client(devices=["0", "0"]) as c:
        pools = [DaskWorkers(c, p) for p in (problem, SlowBooth())]
        assert [(p.resources, p.slots()) for p in pools] == [({"GPU": 1}, 2), ({}, 2)]
        for pool in pools:
            pool.close()
        result = tune(problem, "random", 6, seed=1, storage=tmp_path / "j.db", client=c)
    assert len({t.info["worker"] for t in result.trials}) == 2 and result.used == 6


def test_a_configuration_that_kills_its_workers_becomes_a_run_error(tmp_path):
    import dask

    marker = tmp_path / "killed"
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with dask_client(workers=2) as c:
            result = tune(KillOnceBooth(str(marker), after=2), "sobol", 6, seed=1, client=c)
    failed = [t for t in result.trials if not t.ok]
    assert marker.is_file() and result.used == 6 and len(failed) == 1
    assert "killed every Dask worker" in failed[0].measurement.error


class _DeviceBooth(SlowBooth):
    """A Booth that claims to measure an OpenCL device (its ``device_info``)."""

    def __init__(self, device_info) -> None:
        super().__init__(delay_s=0.0, hardware=True)
        self.device_info = device_info


def test_a_worker_given_a_device_of_another_model_stops_the_run_before_any_trial(tmp_path):
    import dataclasses

    from gpautotune.exceptions import DeviceError
    from gpautotune.problems.opencl import select_device

    try:
        device = select_device()
    except DeviceError as exc:
        pytest.skip(f"no OpenCL device: {exc}")
    problem = _DeviceBooth(dataclasses.replace(device, device="Some Other GPU"))
    selector = f"{device.platform_index}:{device.device_index}"
    db = tmp_path / "j.db"
    with dask_client(devices=[selector]) as c, pytest.raises(DeviceError, match="Some Other GPU"):
        tune(problem, "random", 4, seed=1, storage=db, client=c)
    assert _count(db, "trials") == 0


class _IsolatedBooth(SlowBooth):
    """A Booth evaluated in an isolated process (like the OpenCL kernels)."""

    def default_evaluator(self):
        from gpautotune.execution import IsolatedEvaluator

        return IsolatedEvaluator(timeout_s=30)


def test_daemonic_workers_are_refused_for_problems_evaluated_in_their_own_process():
    import dask
    from distributed import Client, LocalCluster

    from gpautotune.exceptions import ConfigError

    # Dask's default, set here because an open dask_client (the module's fixture) keeps
    # its own setting, non-daemonic, for the workers it restarts
    with dask.config.set({"distributed.worker.daemon": True}):
        cluster = LocalCluster(n_workers=1, processes=True, dashboard_address=":0")
    with cluster, Client(cluster) as c, pytest.raises(ConfigError, match="DAEMON=False"):
        tune(_IsolatedBooth(), "random", 3, seed=1, client=c)
    result = tune(_IsolatedBooth(), "random", 3, seed=1, workers=1)  # dask_client's are not
    assert result.used == 3 and all(t.ok for t in result.trials)
