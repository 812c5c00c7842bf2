"""Evaluate in a separate worker process, with a timeout and a restart after a crash.

A driver crash or a hung kernel must cost one trial, not the run. The worker is a
``spawn``-ed process that receives the (pickled) problem once, calls its optional
``prepare()`` hook (device contexts, input data: not counted in the timeout), then
serves evaluations one at a time over a pipe. When no result arrives within
``timeout_s`` the worker is killed and the trial is a ``timeout``; when it dies, a
``run_error``. The next evaluation starts a fresh worker.

The worker dies with its parent however the parent ends (``kill -9`` included:
:func:`~gpautotune.execution.die_with_parent`), and its temporary files go to a folder
the evaluator owns and removes when the worker stops or is killed (``tempfile`` in the
worker points there), so a killed evaluation leaves neither a process nor a folder.

``spawn`` normally runs the parent's main script again in the worker, which for a user
script without an ``if __name__ == "__main__":`` guard would start the whole tuning run
there; the worker skips it unless the pickled problem refers to ``__main__``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing as mp
import os
import pickle
import shutil
import sys
import tempfile
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.execution._evaluator import Evaluable, Evaluator
from gpautotune.execution._lifetime import die_with_parent, owned_temp_folder
from gpautotune.measurement import Measurement, Status
from gpautotune.space import Config

__all__ = ["IsolatedEvaluator"]

_log = logging.getLogger(__name__)


class _WorkerLost(Exception):
    """The worker died or did not answer; the message says how."""


_GUARD_HINT = (
    '; a script whose functions the problem uses needs an `if __name__ == "__main__":` guard'
)


@contextlib.contextmanager
def _main_script_skipped(skip: bool) -> Iterator[None]:
    """While a worker is spawned, hide the main script from ``spawn`` when ``skip``."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main and k in main.__dict__}
    if not skip or main is None or not saved:
        yield
        return
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)


def _evaluate_here(problem: Evaluable | None, config: Config) -> Measurement:
    if problem is None:
        return Measurement.failure(Status.RUN_ERROR, "the worker has no problem to evaluate")
    try:
        return Measurement.of(problem.evaluate(config))
    except Exception as exc:  # noqa: BLE001 - the evaluation boundary turns crashes into statuses
        return Measurement.crash(exc)


def _serve(conn: Connection, parent_pid: int | None = None, tmp: str | None = None) -> None:
    """The worker's loop: ``problem`` (pickled) -> ready/error, ``evaluate`` -> result.

    Args:
        conn: the worker's end of the pipe.
        parent_pid: the evaluator's process (the worker dies with it).
        tmp: the folder for the worker's temporary files.
    """
    if parent_pid is not None:
        die_with_parent(parent_pid)
    if tmp is not None:
        tempfile.tempdir = tmp
    problem: Evaluable | None = None
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            return
        if kind == "problem":
            try:
                problem = pickle.loads(payload)
                prepare = getattr(problem, "prepare", None)
                if callable(prepare):
                    prepare()
                conn.send(("ready", None))
            except Exception:  # noqa: BLE001 - reported to the parent
                problem = None
                conn.send(("error", traceback.format_exc(limit=8)))
        elif kind == "evaluate":
            result = _evaluate_here(problem, payload)
            try:
                conn.send(("result", result))
            except Exception as exc:  # noqa: BLE001 - e.g. unpicklable metrics
                conn.send(
                    ("result", Measurement.failure(Status.RUN_ERROR, f"result not sendable: {exc}"))
                )


def _payload(problem: Evaluable) -> bytes:
    """``problem`` pickled for the worker.

    Raises:
        ConfigError: it cannot be pickled (a lambda, a nested function, an open device).
    """
    try:
        return pickle.dumps(problem)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing
        raise ConfigError(
            f"{type(problem).__name__} cannot be sent to a worker process (not picklable: "
            f"{exc}); an IsolatedEvaluator needs a function defined at the top level of a "
            "module or script (not a lambda or a nested function), or evaluate in-process "
            "(leave out evaluator=)"
        ) from None


class IsolatedEvaluator(Evaluator):
    """Run ``problem.evaluate`` in a worker process with a per-evaluation timeout.

    Works for any picklable problem. A problem may define ``prepare()``, called
    in the worker once after it is received (under ``startup_timeout_s``, not
    ``timeout_s``). The worker keeps the problem between evaluations, so caches in it
    (built programs, device buffers) persist until a crash or timeout restarts it.

    Args:
        timeout_s: seconds one evaluation may take before the worker is killed.
        startup_timeout_s: seconds for starting a worker and preparing the problem.
    """

    def __init__(self, *, timeout_s: float = 60.0, startup_timeout_s: float = 300.0) -> None:
        if not (0 < timeout_s < math.inf and 0 < startup_timeout_s < math.inf):
            raise ConfigError(
                f"timeouts must be positive and finite, got timeout_s={timeout_s}, "
                f"startup_timeout_s={startup_timeout_s}"
            )
        self.timeout_s, self.startup_timeout_s = float(timeout_s), float(startup_timeout_s)
        self._process: Any = None
        self._conn: Connection | None = None
        self._problem: Evaluable | None = None
        self._tmp: str | None = None
        self._busy = False
        #: Workers started so far (restarts after crashes or timeouts included).
        self.workers_started = 0

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def _evaluate(self, problem: Evaluable, config: Config) -> Measurement:
        try:
            conn = self._ready(problem)
        except _WorkerLost as exc:
            return Measurement.failure(Status.RUN_ERROR, f"worker setup failed: {exc}")
        conn.send(("evaluate", dict(config)))
        self._busy = True
        if not conn.poll(self.timeout_s):
            self._kill()
            return Measurement.failure(
                Status.TIMEOUT,
                f"no result within {self.timeout_s:g} s; the worker was killed",
                timeout_s=self.timeout_s,
            )
        try:
            _, result = conn.recv()
        except (EOFError, OSError):
            code = self._kill()
            return Measurement.failure(
                Status.RUN_ERROR, f"the worker process died (exit code {code})"
            )
        self._busy = False
        return result

    def check(self, problem: Evaluable) -> None:
        """Refuse a problem that cannot be pickled to the worker.

        Raises:
            ConfigError: naming the pickling error and what to do.
        """
        _payload(problem)

    def _ready(self, problem: Evaluable) -> Connection:
        """A live worker holding ``problem`` (started and sent the problem when needed)."""
        if self.alive and self._problem is problem and self._conn is not None:
            return self._conn
        payload = _payload(problem)
        needs_main = b"__main__" in payload
        # a worker that runs an unguarded main script again dies before it answers
        hint = _GUARD_HINT if needs_main else ""
        if not self.alive:
            self._start(needs_main)
        assert self._conn is not None
        try:
            self._conn.send(("problem", payload))
        except OSError:
            code = self._kill()
            raise _WorkerLost(f"the worker died on start (exit code {code}){hint}") from None
        if not self._conn.poll(self.startup_timeout_s):
            self._kill()
            raise _WorkerLost(
                f"no answer within {self.startup_timeout_s:g} s while preparing the problem"
            )
        try:
            kind, detail = self._conn.recv()
        except (EOFError, OSError):
            raise _WorkerLost(
                f"the worker died while preparing the problem (exit code {self._kill()}){hint}"
            ) from None
        if kind != "ready":
            self._problem = None
            raise _WorkerLost(str(detail))
        self._problem = problem
        return self._conn

    def _start(self, needs_main: bool = True) -> None:
        self._kill()  # a worker that died between evaluations: its folder goes too
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=True)
        self._tmp = str(owned_temp_folder("gpautotune-worker-"))
        process = ctx.Process(
            target=_serve,
            args=(child, os.getpid(), self._tmp),
            daemon=True,
            name="gpautotune-worker",
        )
        with _main_script_skipped(not needs_main):
            process.start()
        self._process = process
        child.close()
        self._conn, self._problem = parent, None
        self.workers_started += 1
        _log.debug("started worker pid %s", self._process.pid)

    def _kill(self) -> int | None:
        """Kill the worker (if alive), remove its temporary folder and forget it; returns
        its exit code."""
        process, self._process, self._problem = self._process, None, None
        self._busy = False
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        code = None
        if process is not None:
            if process.is_alive():
                process.kill()
            process.join(10)
            code = process.exitcode
            _log.info("worker pid %s ended (exit code %s)", process.pid, code)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        return code

    def close(self) -> None:
        """Stop the worker: politely when idle, at once when it is evaluating (the
        evaluation was abandoned: an exception or a signal ended the caller's wait)."""
        if self._process is not None and not self._busy:
            try:
                if self._conn is not None:
                    self._conn.send(("stop", None))
                self._process.join(5)
            except (OSError, BrokenPipeError):
                pass
        self._kill()
