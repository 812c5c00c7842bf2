"""``gpautotune tune``: tune one problem, then print the run's summary."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from gpautotune.cli._app import (
    AllowImports,
    DaskScheduler,
    DaskWorkers,
    Overrides,
    config_table,
    console,
    err_console,
    fmt,
    user_errors,
)
from gpautotune.exceptions import ConfigError, GPAutotuneError
from gpautotune.progress import ProgressBar, best_text


@user_errors
def tune(
    config: Annotated[Path, typer.Argument(help="YAML tuning file")],
    budget: Annotated[int | None, typer.Option(help="override the file's budget")] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="trial journal: a path or sqlite:///PATH; re-using it resumes the run",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="override the file's seed")] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="the run's name (the file's `label`): another name starts another run; "
            "runs of one name may differ by seed, not by strategy or its options"
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(help="resume the run when the journal holds it (--no-resume: refuse)"),
    ] = True,
    allow_imports: AllowImports = False,
    set_: Overrides = None,
    workers: DaskWorkers = None,
    scheduler: DaskScheduler = None,
    devices: Annotated[
        str | None,
        typer.Option(
            help="one local worker per OpenCL device: PLATFORM:DEVICE,... (nvidia:0,nvidia:1)"
        ),
    ] = None,
) -> None:
    """Tune the problem of CONFIG; re-running the same command resumes it.

    With --workers, --devices or --scheduler, evaluations run asynchronously on Dask:
    one per worker, the strategy asked for the next configuration as each one finishes.
    """
    from gpautotune.config import build_problem, build_strategy, load_config, warm_start_trials
    from gpautotune.storage import check_run_name
    from gpautotune.tuner import tune as run_tune

    if db is not None and not db.strip():
        raise ConfigError(
            "--db is empty: give a journal path or sqlite:///PATH, or leave --db out for "
            "the file's storage"
        )
    _check_options(budget, workers)
    cfg = load_config(config, set_ or ())
    updates = {"budget": budget, "storage": db, "seed": seed, "label": name}
    cfg = cfg.model_copy(update={k: v for k, v in updates.items() if v is not None})
    with console.status(f"preparing {cfg.problem.name}"):
        problem = build_problem(cfg.problem, allow_imports=allow_imports)
        strategy = build_strategy(cfg.strategy, problem, cfg.seed)
        warm_start = warm_start_trials(cfg, problem)  # a missing file: before the bar
    storage = cfg.storage_path()
    spec = _spec(problem, strategy, cfg.seed, cfg.label)
    with _existing(storage) as journal:
        if journal is not None:  # a taken name said before the header (the tuner
            check_run_name(journal, spec)  # checks it again as it makes a new run)
        stored = _stored(journal, spec) if resume else None
    named = f", name {cfg.label!r}" if cfg.label else ""
    resuming = f"; resuming run {stored[0]} with {_trials(stored[1])} stored" if stored else ""
    if stored and stored[2] >= cfg.budget:
        resuming += " (its budget is used: nothing to measure)"
    console.print(
        f"[bold]{problem.name}[/] with [bold]{strategy.name}[/], budget {cfg.budget}, "
        f"seed {cfg.seed}{named}, journal {storage}{resuming}"
    )
    try:
        with (
            _cluster(workers, scheduler, devices) as client,
            ProgressBar("tuning", cfg.budget, console=console) as bar,
            _resume_said_above(),
        ):
            if client is not None:
                console.print(f"evaluating on the Dask workers of {client.scheduler.address}")
            used, best = stored[2:] if stored else (0, best_text(None))
            bar.update(used, status=best)

            def on_trial(trial: Any, run: Any) -> None:
                bar.update(run.used, status=best_text(run.best.value if run.best else None))

            result = run_tune(
                problem,
                strategy,
                cfg.budget,
                storage=storage,
                seed=cfg.seed,
                warm_start=warm_start,
                batch_size=cfg.batch_size,
                callback=on_trial,
                label=cfg.label,
                load_if_exists=resume,
                client=client,
            )
            bar.update(result.used, status=best_text(result.best_value))
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or SIGTERM/SIGHUP (user_errors)
        _say_interrupted(storage, spec)
        raise
    _summary(problem, result)
    _baseline_speedup(problem, result)


def _check_options(budget: int | None, workers: int | None) -> None:
    """Refuse the command's own numbers the file's checks do not see (before any output)."""
    if budget is not None and budget < 1:
        raise ConfigError(f"--budget must be a positive number of evaluations, got {budget}")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")


def _trials(n: int) -> str:
    return f"{n} trial" if n == 1 else f"{n} trials"


def _spec(problem: Any, strategy: Any, seed: Any, label: Any) -> Any:
    from gpautotune.tuner import run_spec

    return run_spec(problem, strategy, seed=seed, label=label)


@contextmanager
def _existing(storage: str) -> Iterator[Any]:
    """The journal at ``storage`` opened to read, or None where there is none yet."""
    from gpautotune.storage import Journal, journal_path

    path = journal_path(storage)
    if path == ":memory:" or not Path(path).is_file():
        yield None
        return
    with Journal(path, read_only=True) as journal:
        yield journal


def _stored(journal: Any, spec: Any) -> tuple[int, int, int, str] | None:
    """``(run id, trials stored, evaluations used, best text)`` of the run the command
    resumes, or None for a new run (or no journal yet)."""
    from gpautotune.tuner import best_trial

    record = journal.find(spec) if journal is not None else None
    trials = journal.trials(record.id) if record is not None else []
    if record is None or not trials:
        return None
    best = best_trial(trials)
    used = sum(t.counts_in_budget for t in trials)
    return record.id, len(trials), used, best_text(best.value if best else None)


@contextmanager
def _resume_said_above() -> Iterator[None]:
    """Leave out the tuner's own 'resuming' warning: the header said it."""
    tuner_log = logging.getLogger("gpautotune.tuner")

    def keep(record: logging.LogRecord) -> bool:
        return not hasattr(record, "resumed_run")

    tuner_log.addFilter(keep)
    try:
        yield
    finally:
        tuner_log.removeFilter(keep)


def _say_interrupted(storage: str, spec: Any) -> None:
    """One line on what an interrupted run left in the journal and how to go on."""
    try:
        with _existing(storage) as journal:
            stored = _stored(journal, spec)
    except GPAutotuneError:
        stored = None
    kept = (
        f"{_trials(stored[1])} of run {stored[0]} ({spec.describe()}) stored in {storage}"
        if stored
        else f"no trial of {spec.describe()} is stored in {storage}"
    )
    err_console.print(
        f"[yellow]interrupted:[/] {escape(kept)}; run the same command to resume",
        highlight=False,
        soft_wrap=True,
    )


def _cluster(
    workers: int | None, scheduler: str | None, devices: str | None
) -> AbstractContextManager[Any]:
    """A Dask client when the command asks for workers, else None (sequential tuning)."""
    if workers is None and scheduler is None and not devices:
        return nullcontext(None)
    from gpautotune.parallel import dask_client

    selectors = [d.strip() for d in devices.split(",") if d.strip()] if devices else None
    return dask_client(scheduler, workers, devices=selectors)


def _spread(trials: list[Any]) -> None:
    """Trials per Dask worker and per device (OpenCL problems), for parallel runs."""
    from collections import Counter

    workers = Counter(str(t.info["worker"]) for t in trials if "worker" in t.info)
    if not workers:
        return
    devices = Counter(
        " ".join(str(m[k]) for k in ("device", "device_index", "pci_bus") if k in m)
        for m in (t.measurement.metrics for t in trials)
        if "device" in m
    )
    for what, counts in (("worker", workers), ("device", devices)):
        if counts:
            listing = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items()))
            console.print(f"trials per {what}: {listing}", highlight=False)


def _baseline_speedup(problem: Any, result: Any) -> None:
    """Measure the problem's untuned baseline once and print the best's speedup over it."""
    baseline = problem.baseline()
    if baseline is None or result.best is None:
        return
    evaluator = problem.default_evaluator()
    try:
        with console.status("measuring the baseline configuration"):
            measured = evaluator(problem, baseline).measurement
    finally:
        evaluator.close()
    if measured.ok:
        console.print(
            f"baseline {measured.value:.6g}; speedup of the best over it: "
            f"{measured.value / result.best.value:.2f}x"
        )
    else:
        console.print(f"baseline configuration failed ({measured.status.value}): {measured.error}")


def _first_line(trial: Any) -> str:
    lines = [x for x in str(trial.measurement.error).splitlines() if x.strip()]
    return lines[0][:200] if lines else ""


def _summary(problem: Any, result: Any) -> None:
    from collections import Counter

    from gpautotune.problems.opencl import refused_launches

    counted = [t for t in result.trials if t.counts_in_budget]
    counts = Counter(t.status.value for t in counted)
    refused = refused_launches(counted)
    console.print(
        f"{result.used} evaluations: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        + (f" ({refused} refused before launch)" if refused else "")
    )
    _spread(counted)
    best = result.best
    if best is None:
        failed = [t for t in counted if t.measurement.error]
        why = (
            f"; last error ({failed[-1].status.value}): {_first_line(failed[-1])}" if failed else ""
        )
        console.print(f"[red]no successful evaluation[/]{escape(why)}", highlight=False)
        return
    console.print(config_table(f"best of run {result.run_id} (trial {best.number})", best.config))
    line = f"best value {best.value:.6g}"
    optimum = getattr(problem, "optimum", None)
    if optimum is not None and math.isfinite(optimum) and optimum > 0:
        line += f"; known optimum {optimum:.6g}; slowdown {best.value / optimum:.4f}"
    for key in problem.report_metrics:
        if key in best.measurement.metrics:
            line += f"; {key} {fmt(best.measurement.metrics[key])}"
    console.print(line)
