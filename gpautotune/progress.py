"""Progress displays for long work: a Rich bar on the terminal, opt-in in the library.

The command line shows one for every long command; library calls show one when asked
(``tune(..., progress=True)``, ``search_policy(..., progress=True)``) and otherwise only
log, through the ``gpautotune`` loggers (``logging.basicConfig(level=logging.INFO)``
prints one line per trial, as Optuna does).
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["ProgressBar", "best_text"]


def best_text(value: float | None, *, what: str = "best") -> str:
    """``best 1.234e-10``, or ``no success yet`` before the first ok value."""
    if value is None or not math.isfinite(value):
        return "no success yet"
    return f"{what} {value:.6g}"


class ProgressBar:
    """A bar with a count, a status text, elapsed and remaining time.

    Args:
        description: what is done (``tuning``, ``repetitions``, ``policies``).
        total: steps expected; None for a spinner until it is known.
        console: where to draw (default: standard error, so that output piped from
            standard output stays clean).
        transient: remove the bar when done.

    Example::

        with ProgressBar("tuning", total=20) as bar:
            for i in range(20):
                bar.update(i + 1, status=best_text(best))
    """

    def __init__(
        self,
        description: str,
        total: int | None,
        *,
        console: Console | None = None,
        transient: bool = False,
    ) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=transient,
        )
        self._task = self._progress.add_task(description, total=total, status="")

    def __enter__(self) -> ProgressBar:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def update(
        self,
        completed: int | None = None,
        *,
        total: int | None = None,
        status: str | None = None,
        description: str | None = None,
    ) -> None:
        """Set the count (and the total, status text or description when given)."""
        fields: dict[str, Any] = {}
        if status is not None:
            fields["status"] = status
        if total is not None:
            fields["total"] = total
        if description is not None:
            fields["description"] = description
        self._progress.update(self._task, completed=completed, **fields)
