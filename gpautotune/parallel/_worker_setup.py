"""What each worker process of a local cluster does first (a Dask preload, by module name),
and how it falls silent when the cluster is shut down after an interrupt.

The workers of a local cluster share the terminal's process group, so Ctrl-C reaches them
as well as the tuner. Their parent shuts them down anyway (what they finish meanwhile is
stored), so they ignore SIGINT rather than die mid-task printing Dask's tracebacks; the
processes they start (isolated evaluators, compiled programs) inherit the ignored signal
and end with them (their parent-death watch), so none of them reports a spurious failure.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["dask_setup", "silence_distributed", "silence_worker"]

#: The loggers Dask prints with, each with those below it (``distributed.nanny``, ...).
_ROOTS = ("distributed", "tornado", "bokeh")


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in the worker process's main thread as it starts."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def silence_distributed() -> Callable[[], None]:
    """Silence Dask's loggers in this process; returns what restores their levels.

    A cluster shut down with tasks still running logs every cancelled one, and its
    nanny every worker it has to kill: after an interrupt that is expected, not news.
    Levels of loggers, not of handlers: Dask's handlers may be absent (the root logger's
    print its messages when logging was set up first) or reset by a cluster's close."""
    loggers = [
        logger
        for name, logger in list(logging.root.manager.loggerDict.items())
        if isinstance(logger, logging.Logger)
        and any(name == root or name.startswith(root + ".") for root in _ROOTS)
        and logger.level != logging.NOTSET
    ]
    loggers += [logging.getLogger(root) for root in _ROOTS]  # those below inherit it
    levels = {logger: logger.level for logger in loggers}
    for logger in levels:
        logger.setLevel(logging.CRITICAL + 1)

    def restore() -> None:
        for logger, level in levels.items():
            logger.setLevel(level)

    return restore


def silence_worker() -> None:
    """:func:`silence_distributed` for the rest of this worker's life (it is shut down)."""
    silence_distributed()
