"""Ctrl-C on a command with a local cluster: the workers ignore SIGINT (their parent shuts
them down) and Dask's logging stays silent while the cluster goes, here and in them."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from gpautotune.parallel import _cluster, dask_client
from gpautotune.parallel._worker_setup import dask_setup, silence_distributed, silence_worker

#: Loggers whose messages a shutdown prints (the client's has a level of its own).
NAMES = ("distributed.nanny", "distributed.worker.state_machine", "distributed.client")


def _printing() -> bool:
    """Whether any of :data:`NAMES` would print an error now."""
    import distributed  # noqa: F401 - sets distributed's logging up

    return any(logging.getLogger(name).isEnabledFor(logging.ERROR) for name in NAMES)


def test_silenced_dask_logging_prints_again_once_restored():
    levels = [logging.getLogger(n).level for n in ("distributed", *NAMES)]
    restore = silence_distributed()
    assert not any(logging.getLogger(name).isEnabledFor(logging.CRITICAL) for name in NAMES)
    assert not logging.getLogger("distributed.made.later").isEnabledFor(logging.CRITICAL)
    restore()
    assert _printing() and [logging.getLogger(n).level for n in ("distributed", *NAMES)] == levels


def test_a_local_worker_ignores_sigint_from_its_start():
    before = signal.getsignal(signal.SIGINT)
    try:
        dask_setup(object())
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
    spec = _cluster.device_workers(["nvidia:0"])["device-0"]["options"]
    assert spec["preload"] == [_cluster.WORKER_SETUP] == ["gpautotune.parallel._worker_setup"]


class _Cluster:
    """A stand-in local cluster: records its options and what its shutdown would print."""

    def __init__(self, **options) -> None:
        self.options, self.printed_at_close = options, None

    def close(self) -> None:
        self.printed_at_close = _printing()


class _Client:
    def __init__(self, cluster: _Cluster) -> None:
        self.ran: list = []

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def _run(self, function, **kwargs):  # what sync() is given
        raise AssertionError("called through sync")

    def sync(self, method, function, **kwargs) -> None:
        self.ran.append((function, kwargs))


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, RuntimeError])
def test_a_shutdown_forced_by_an_interrupt_is_silent(monkeypatch, error):
    clusters, clients = [], []
    monkeypatch.setattr(
        _cluster,
        "LocalCluster",
        lambda **options: clusters.append(_Cluster(**options)) or clusters[-1],
    )
    monkeypatch.setattr(_cluster, "Client", lambda c: clients.append(_Client(c)) or clients[-1])
    with dask_client(workers=2):
        pass
    assert clusters[0].printed_at_close and clients[0].ran == []  # a normal end: as before
    assert clusters[0].options["preload"] == [_cluster.WORKER_SETUP]
    with pytest.raises(error), dask_client(workers=2):
        raise error()
    assert clusters[1].printed_at_close is False  # silent while the cluster went
    ((function, kwargs),) = clients[1].ran
    assert function is silence_worker and kwargs["callback_timeout"] > 0  # the workers too
    assert _printing()  # and this process prints again


CHILD = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"


def _worker_state() -> tuple[int, str]:
    """In a worker: its pid, and the SIGINT handler of a Python process it starts."""
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    return os.getpid(), child.stdout.strip()


@pytest.mark.slow
def test_ctrl_c_leaves_the_workers_to_their_parent_and_prints_nothing(capfd, caplog):
    """A real local cluster: SIGINT does not end a worker (nor what it starts), and an
    interrupt while a task runs shuts the cluster down without a line from Dask."""
    with pytest.raises(KeyboardInterrupt), dask_client(workers=1) as client:
        ((pid, child),) = client.run(_worker_state).values()
        assert child == "True"
        task = client.submit(time.sleep, 3, pure=False)
        while not any(client.processing().values()):
            time.sleep(0.05)
        os.kill(pid, signal.SIGINT)  # as Ctrl-C sends it to the whole process group
        time.sleep(0.3)
        assert list(client.run(os.getpid).values()) == [pid] and not task.done()
        raise KeyboardInterrupt
    err = capfd.readouterr().err  # the workers' (this process's goes to caplog)
    assert "distributed" not in err and "Traceback" not in err, err
    loud = [r for r in caplog.records if r.name.startswith("distributed") and r.levelno > 20]
    assert not loud, loud
