"""Child processes that die with their parent, whatever ends the parent.

A worker or a compiled program left running after its tuner was killed keeps a core busy
until someone finds it. Two mechanisms, used together:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through :mod:`ctypes`): the kernel
  kills the child when the thread that started it ends, ``kill -9`` of the parent
  included, even while the child spins in native code;
* everywhere, in Python children, a watchdog thread that ends the process when its
  parent's pid changes (the child was re-parented: the parent is gone).

A child that the parent outlives by a moment is also caught: both check the parent pid
right after they are armed. Compiled programs started with :func:`parent_death_preexec`
get the first mechanism (they are not Python).

A process killed with ``kill -9`` cannot remove its temporary folders. Folders made by
:func:`owned_temp_folder` carry their process's pid in their name; each new one first
removes those whose process no longer exists. A command run inside
:func:`signals_end_cleanly` ends on SIGTERM or SIGHUP as on an exception, so that its
``finally`` blocks stop its workers and remove its folders.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "die_with_parent",
    "signals_end_cleanly",
    "owned_temp_folder",
    "parent_death_preexec",
    "remove_orphaned_folders",
]

_PR_SET_PDEATHSIG = 1
_WATCH_INTERVAL_S = 0.5


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux (loaded once, in the parent); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a Python child process: end it when ``parent_pid`` dies.

    Args:
        parent_pid: the parent's pid (``os.getpid()`` in the parent, passed down).
    """
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_WATCH_INTERVAL_S)
        os._exit(1)

    threading.Thread(target=watch, name="gpautotune-parent-watch", daemon=True).start()


def parent_death_preexec() -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that kills the program when the
    process starting it dies (Linux); None where the platform has no such signal."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:  # runs in the child between fork and exec: no imports, no locks
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_orphaned_folders(
    prefix: str, parent: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Remove the folders ``<prefix><pid>-*`` (in ``parent``, default the temporary
    folder) whose process is gone; returns them."""
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = folder.name.removeprefix(prefix).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def owned_temp_folder(prefix: str) -> Path:
    """A new temporary folder ``<prefix><pid>-XXXXXXXX`` of this process, made after
    removing the folders of ``prefix`` left by processes that are gone."""
    remove_orphaned_folders(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def _end(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def signals_end_cleanly() -> Iterator[None]:
    """SIGTERM and SIGHUP end the command as an exception does: ``finally`` blocks stop
    worker processes and remove temporary folders (the default action would not)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal set to be ignored stays ignored (SIGHUP under nohup).
    before = {
        sig: signal.signal(sig, _end)
        for sig in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) is signal.SIG_DFL
    }
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
