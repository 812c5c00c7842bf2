"""Run a comparison file on Dask: every pending repetition is one task.

Re-running the same comparison skips the repetitions the journal holds as finished with
the same budget and resumes the others from their stored trials, so a killed comparison
continues where it stopped and a larger budget extends the stored runs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from distributed import as_completed

from gpautotune.comparison._config import (
    ComparisonConfig,
    Repetition,
    expand,
    load_comparison,
    run_specs,
)
from gpautotune.comparison._dask import RepetitionOutcome, dask_client, run_repetition, task_options
from gpautotune.config import build_problem
from gpautotune.exceptions import ConfigError, StorageError
from gpautotune.problems import Problem, in_family
from gpautotune.storage import Journal, check_run_name, journal_path

__all__ = [
    "ComparisonResult",
    "ProgressCallback",
    "run_comparison",
    "pending_repetitions",
    "select_problems",
]

_log = logging.getLogger(__name__)

#: ``progress(done, total, outcome)``: once with ``outcome=None`` before the first task
#: (``done`` = repetitions already finished), then after each task.
ProgressCallback = Callable[[int, int, RepetitionOutcome | None], None]


@dataclass(frozen=True)
class ComparisonResult:
    """What :func:`run_comparison` did.

    Attributes:
        config: the comparison (strategies and problems restricted to those selected).
        storage: the journal holding every repetition.
        total: repetitions in the comparison.
        skipped: repetitions already finished in the journal (not run again).
        outcomes: one per task run now, failures included.
        wall_s: wall time of the whole call.
        workers: Dask workers that served it.
    """

    config: ComparisonConfig
    storage: str
    total: int
    skipped: int
    outcomes: list[RepetitionOutcome] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 0

    @property
    def failed(self) -> list[RepetitionOutcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def completed(self) -> int:
        """Repetitions finished in the journal after this call."""
        return self.skipped + sum(o.ok for o in self.outcomes)


def _catalog(config: ComparisonConfig, problems: Sequence[Problem]) -> None:
    """Record each problem (section, optimum) and the report's settings in the journal,
    so that a report made later from the journal alone is the comparison's."""
    with Journal(config.storage) as journal:
        journal.record_report_settings(
            {
                "checkpoints": config.report_checkpoints(),
                "reference": config.reference_label(),
                "labels": config.file_labels(),
                "output": str(config.report_dir().resolve()) if config.output else None,
            }
        )
        for section, problem in zip(config.problems, problems, strict=True):
            journal.record_problem(
                problem.name,
                problem.describe(),
                {"name": section.name, **section.options},
                problem.optimum,
            )


def select_problems(
    config: ComparisonConfig, problems: Sequence[Problem], names: Sequence[str] | None
) -> tuple[ComparisonConfig, list[Problem]]:
    """Only the problems called one of ``names``, or of one of those families (``gemm``
    keeps ``gemm/RTX_3090``); all when ``names`` is empty.

    Raises:
        ConfigError: a name matches no problem of the comparison (listing them).
    """
    if not names:
        return config, list(problems)

    unmatched = [n for n in names if not any(in_family(p.name, n) for p in problems)]
    if unmatched:
        known = [p.name for p in problems]
        raise ConfigError(f"no problem called {unmatched}; the comparison has {known}")
    keep = [i for i, p in enumerate(problems) if any(in_family(p.name, n) for n in names)]
    sections = [config.problems[i] for i in keep]
    return config.model_copy(update={"problems": sections}), [problems[i] for i in keep]


def pending_repetitions(
    config: ComparisonConfig, problems: Sequence[Problem], *, allow_imports: bool = False
) -> tuple[list[Repetition], int]:
    """The repetitions still to run and the number already finished with this budget.

    Raises:
        RunNameError: a strategy's label is taken in the journal by runs of the problem
            with another strategy or other options (said once, before any task).
    """
    specs = run_specs(config, list(problems))
    repetitions = list(expand(config, list(problems), allow_imports=allow_imports, specs=specs))
    with Journal(config.storage) as journal:
        finished = journal.finished()
        for spec in specs.values():
            check_run_name(journal, spec)
    pending = [
        r
        for r in repetitions
        if (r.key, r.budget) not in finished and (r.placeless_key, r.budget) not in finished
    ]
    longest: dict[str, int] = {}
    for key, budget in finished:
        longest[key] = max(longest.get(key, 0), budget or 0)
    for r in pending:  # a smaller budget would cut finished runs short (refused by tune)
        held = max(longest.get(r.key, 0), longest.get(r.placeless_key or "", 0))
        if held > r.budget:
            raise ConfigError(
                f"{r.describe()} is finished in {config.storage!r} with a budget of {held}, "
                f"above the comparison's {r.budget}: give a budget of at least {held} (a "
                f"report reads the best at {r.budget} with `gpautotune report --checkpoint "
                f"{r.budget}`)"
            )
    return pending, len(repetitions) - len(pending)


def run_comparison(
    config_path: str | os.PathLike[str],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    only: Sequence[str] | None = None,
    storage: str | os.PathLike[str] | None = None,
    problems_only: Sequence[str] | None = None,
    allow_imports: bool = False,
) -> ComparisonResult:
    """Run (or resume) the comparison of ``config_path`` on Dask.

    Args:
        config_path: the comparison YAML file (see :mod:`gpautotune.comparison._config`).
        scheduler: a running Dask scheduler (``tcp://HOST:PORT``); None starts a local
            cluster of ``workers`` processes.
        workers: local worker processes (default: the file's ``workers``, else the cores).
        progress: called before the first task and after each (see :data:`ProgressCallback`).
        only: run only the strategies with these labels.
        storage: a journal path replacing the file's ``storage``.
        problems_only: run only these problems (names or families, see
            :func:`select_problems`).
        allow_imports: the user's opt-in to the Python code the file names (problems
            named ``package.module:factory``, ``module:function`` options).

    Returns:
        What ran; failed repetitions are listed (with their errors), not raised.
    """
    start = time.perf_counter()
    path = None if storage is None else journal_path(storage)
    if path == ":memory:":
        raise StorageError("a comparison's journal must be a file (its workers share it)")
    config = load_comparison(
        config_path, allow_imports=allow_imports, only=list(only) if only else None, storage=path
    )
    Path(config.storage).expanduser().parent.mkdir(parents=True, exist_ok=True)
    problems = [
        build_problem(s, factory_names=True, allow_imports=allow_imports) for s in config.problems
    ]
    config, problems = select_problems(config, problems, problems_only)
    _catalog(config, problems)
    pending, skipped = pending_repetitions(config, problems, allow_imports=allow_imports)
    total = len(pending) + skipped
    if progress is not None:
        progress(skipped, total, None)
    if not pending:
        return ComparisonResult(
            config, config.storage, total, skipped, [], time.perf_counter() - start, 0
        )
    n_workers = 0
    outcomes: list[RepetitionOutcome] = []
    with dask_client(scheduler, workers or config.workers) as client:
        n_workers = len(client.scheduler_info().get("workers", {}))
        _log.info(
            "%d repetitions to run (%d finished) on %d workers", len(pending), skipped, n_workers
        )
        lease = not config.hardware_resources
        futures = {
            client.submit(
                run_repetition,
                rep,
                config.hardware_slots,
                lease,
                **task_options(rep, config.retries, config.hardware_resources),
            ): rep
            for rep in pending
        }
        for future in as_completed(futures):
            outcome = _outcome(future, futures[future])
            outcomes.append(outcome)
            if progress is not None:
                progress(skipped + len(outcomes), total, outcome)
            future.release()
    return ComparisonResult(
        config, config.storage, total, skipped, outcomes, time.perf_counter() - start, n_workers
    )


def _outcome(future: object, rep: Repetition) -> RepetitionOutcome:
    """The task's result, or a failed outcome carrying its error (listed in the result,
    printed by the command line: not logged as a warning too)."""
    try:
        outcome = future.result()  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - one failed repetition must not stop the others
        outcome = RepetitionOutcome(rep, -1, 0, None, 0.0, "", f"{type(exc).__name__}: {exc}")
    if not outcome.ok:
        _log.info("repetition failed: %s", outcome.describe())
    return outcome
