"""The rules that stop :func:`~gpautotune.tuner.tune` early: first failures that point
at the set-up, not at the configurations tried.

Both look at a run's first evaluations only (counted in the budget; warm-start trials
are data), once, when the last of them is stored; a success among them, or a failure of
another kind or text, keeps the run going to its budget. A run they stop is set aside
(:meth:`TuningRun.set_aside`): its trials stay in the journal, and the same settings
start a fresh run once the mistake is fixed.
"""

from __future__ import annotations

import re

from gpautotune.measurement import Status
from gpautotune.trial import Trial
from gpautotune.tuner._run import TuningRun

__all__ = ["FIRST_BUILD_ERRORS", "FIRST_CRASHES", "first_failures"]

#: The first evaluations of a run that, all raising the same exception, stop :func:`tune`.
FIRST_CRASHES = 3

#: The first evaluations of a run that, all failing to build with the same error text,
#: stop :func:`tune`: a set-up mistake (a misspelt ``tune_params`` name or kernel, a
#: missing header) fails every configuration alike. Five, not three as for exceptions,
#: because builds may fail legitimately: a space where a fraction ``p`` of the
#: configurations fails with one message (``#error`` under ``#if tile > 16``) is
#: stopped when its first five, drawn apart by the initial design, all land there,
#: with probability about ``p ** 5`` (3% at ``p = 0.5``, 0.2% at ``p = 0.3``); such
#: configurations belong in ``restrictions``. A set-up mistake costs five builds,
#: not the budget.
FIRST_BUILD_ERRORS = 5

#: Parts of a compiler's log that differ from build to build of one program: absolute
#: paths (temporary files: ``/tmp/ccX1y2Z3.o``, pocl's ``/root/.cache/.../tempfile_Ab12Cd
#: .cl``), at the start of a line or after a space, quote or parenthesis, and code
#: addresses (``(.text+0x5c)``).
_VOLATILE = re.compile(r"(?<![^\s`'\"(])/[\w.~+/-]+|0x[0-9a-fA-F]+")


def first_failures(run: TuningRun) -> str | None:
    """Why ``run`` stops now (a one-line message), or None to go on.

    It stops when its first :data:`FIRST_CRASHES` evaluations raised one exception (a
    bug in the objective), or its first :data:`FIRST_BUILD_ERRORS` all failed with
    ``build_error`` and the same error text, paths and code addresses aside (a set-up
    mistake), unless the run answers from data (a replayed table, whose digest the run
    stores: its failures are the table's, each the same marker, never a set-up mistake).
    """
    counted = [t for t in run.trials if t.counts_in_budget]
    if len(counted) == FIRST_CRASHES:
        return _crashes(run, counted)
    if len(counted) == FIRST_BUILD_ERRORS:
        return _build_errors(run, counted)
    return None


def _set_aside(run: TuningRun, kept: str) -> str:
    return (
        f"Run {run.run_id} of {run.journal.path} is set aside (status stopped) with these "
        f"trials stored, {kept}"
    )


def _crashes(run: TuningRun, counted: list[Trial]) -> str | None:
    signatures = {t.measurement.crash_signature for t in counted}
    if len(signatures) != 1 or None in signatures:
        return None
    site = counted[-1].measurement.crash_site
    return (
        f"the first {FIRST_CRASHES} evaluations all raised {signatures.pop()}{site}: a bug "
        f"in the objective, not a bad configuration. "
        f"{_set_aside(run, 'their tracebacks included')}; fix the objective and run "
        "again for a fresh run"
    )


def _build_errors(run: TuningRun, counted: list[Trial]) -> str | None:
    errors = [
        t.measurement.error.strip()
        for t in counted
        if t.status is Status.BUILD_ERROR and t.measurement.error and t.measurement.error.strip()
    ]
    if len(errors) != len(counted):
        return None  # a success, another failure, or no text to compare
    if len({_VOLATILE.sub("<>", e) for e in errors}) != 1:
        return None
    if run.journal.data_digest(run.run_id) is not None:  # a replayed table's failures
        return None
    first = errors[-1].splitlines()[0].strip()
    return (
        f"the first {FIRST_BUILD_ERRORS} configurations all failed to build with the same "
        f"error ({first}): a set-up mistake, not a bad configuration. "
        f"{_set_aside(run, 'their build logs included')}; fix the kernel or its "
        "tune_params and run again for a fresh run (configurations that cannot build "
        "belong in restrictions)"
    )
