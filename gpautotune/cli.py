"""The command line: thin wrappers that parse, call the API and print (Typer + Rich)."""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from gpautotune.exceptions import GPAutotuneError

app = typer.Typer(
    help="gpautotune: Bayesian-optimization autotuning with Gaussian processes.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])
AllowImports = Annotated[
    bool,
    typer.Option(
        "--allow-imports", help="let the file import the Python code it names (module:function)"
    ),
]
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="override a key of the file, e.g. problem.sizes.n=4096 (repeatable)"
    ),
]


def _end(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _signals_end_cleanly() -> Iterator[None]:
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


def user_errors(fn: F) -> F:
    """Print a gpautotune error as one line and exit with code 2 (no traceback); end
    cleanly on SIGTERM/SIGHUP."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _signals_end_cleanly():
                return fn(*args, **kwargs)
        except GPAutotuneError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=2) from None

    return wrapper  # type: ignore[return-value]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _config_table(title: str, config: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=True)
    table.add_column("parameter")
    table.add_column("value")
    for k, v in config.items():
        table.add_row(k, _fmt(v))
    return table


@app.command()
@user_errors
def tune(
    config: Annotated[Path, typer.Argument(help="YAML tuning file")],
    budget: Annotated[int | None, typer.Option(help="override the file's budget")] = None,
    db: Annotated[
        str | None, typer.Option(help="trial journal (SQLite); re-using it resumes the run")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="override the file's seed")] = None,
    allow_imports: AllowImports = False,
    set_: Overrides = None,
) -> None:
    """Tune the problem of CONFIG; re-running the same command resumes it."""
    from gpautotune.config import build_problem, build_strategy, load_config, warm_start_trials
    from gpautotune.tuner import tune as run_tune

    cfg = load_config(config, set_ or ())
    updates = {
        k: v for k, v in {"budget": budget, "storage": db, "seed": seed}.items() if v is not None
    }
    cfg = cfg.model_copy(update=updates)
    with console.status(f"preparing {cfg.problem.name}"):
        problem = build_problem(cfg.problem, allow_imports=allow_imports)
        strategy = build_strategy(cfg.strategy, problem, cfg.seed)
    storage = cfg.storage_path()
    console.print(
        f"[bold]{problem.name}[/] with [bold]{strategy.name}[/], budget {cfg.budget}, seed {cfg.seed}, journal {storage}"
    )
    with _progress() as progress:
        task = progress.add_task("tuning", total=cfg.budget, best="-")

        def on_trial(trial: Any, run: Any) -> None:
            best = run.best
            progress.update(task, completed=run.used, best=_fmt(best.value) if best else "-")

        result = run_tune(
            problem,
            strategy,
            cfg.budget,
            storage=storage,
            seed=cfg.seed,
            warm_start=warm_start_trials(cfg, problem),
            batch_size=cfg.batch_size,
            callback=on_trial,
            label=cfg.label,
        )
        progress.update(task, completed=result.used)
    _summary(problem, result)
    _baseline_speedup(problem, result)


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
            f"baseline {measured.value:.6g}; speedup of the best over it: {measured.value / result.best.value:.2f}x"
        )
    else:
        console.print(f"baseline configuration failed ({measured.status.value}): {measured.error}")


def _first_line(trial: Any) -> str:
    lines = [x for x in str(trial.measurement.error).splitlines() if x.strip()]
    return lines[0][:200] if lines else ""


def _progress() -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("best {task.fields[best]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


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
    best = result.best
    if best is None:
        failed = [t for t in counted if t.measurement.error]
        why = (
            f"; last error ({failed[-1].status.value}): {_first_line(failed[-1])}" if failed else ""
        )
        console.print(f"[red]no successful evaluation[/]{escape(why)}", highlight=False)
        return
    console.print(_config_table(f"best of run {result.run_id} (trial {best.number})", best.config))
    line = f"best value {best.value:.6g}"
    optimum = getattr(problem, "optimum", None)
    if optimum is not None and math.isfinite(optimum) and optimum != 0:
        line += f"; known optimum {optimum:.6g}; slowdown {best.value / optimum:.4f}"
    for key in problem.report_metrics:
        if key in best.measurement.metrics:
            line += f"; {key} {_fmt(best.measurement.metrics[key])}"
    console.print(line)


@app.command()
@user_errors
def show(
    db: Annotated[Path, typer.Argument(help="trial journal")],
    run: Annotated[int | None, typer.Option(help="only this run id")] = None,
    top: Annotated[int, typer.Option(help="best trials to list per run")] = 5,
) -> None:
    """List the runs of a journal and their best trials."""
    from gpautotune.storage import Journal
    from gpautotune.tuner import best_trial

    if not db.is_file():
        raise GPAutotuneError(f"journal {str(db)!r} does not exist")
    journal = Journal(db, read_only=True)
    runs = [journal.get_run(run)] if run is not None else journal.runs()
    overview = Table(title=f"runs in {db}")
    for col in ("run", "problem", "strategy", "seed", "budget", "used", "failed", "best", "status"):
        overview.add_column(col)
    details = []
    for r in runs:
        trials = journal.trials(r.id)
        counted = [t for t in trials if t.counts_in_budget]
        best = best_trial(trials)
        overview.add_row(
            str(r.id),
            r.problem,
            r.strategy,
            str(r.seed),
            str(r.budget),
            str(len(counted)),
            str(sum(not t.ok for t in counted)),
            _fmt(best.value) if best else "-",
            r.status,
        )
        details.append((r, sorted((t for t in trials if t.ok), key=lambda t: t.value)[:top]))
    console.print(overview)
    for r, best in details:
        if not best:
            continue
        table = Table(title=f"run {r.id}: best {len(best)} trials")
        names = list(best[0].config)
        for col in ("trial", "value", *names):
            table.add_column(col)
        for t in best:
            table.add_row(str(t.number), _fmt(t.value), *(_fmt(t.config[n]) for n in names))
        console.print(table)


@app.command()
@user_errors
def export(
    db: Annotated[Path, typer.Argument(help="trial journal")],
    csv: Annotated[Path | None, typer.Option(help="write a CSV file")] = None,
    parquet: Annotated[Path | None, typer.Option(help="write a Parquet file")] = None,
    t4: Annotated[
        Path | None, typer.Option(help="write one run as a T4 results file (JSON)")
    ] = None,
    validate: Annotated[
        bool, typer.Option(help="check the T4 file against its schema (needs jsonschema)")
    ] = False,
    run: Annotated[int | None, typer.Option(help="only this run id")] = None,
) -> None:
    """Export the trials of a journal as CSV, Parquet and/or T4 (Kernel Tuner's results format)."""
    from gpautotune.storage import Journal, export_t4, export_table

    if not db.is_file():
        raise GPAutotuneError(f"journal {str(db)!r} does not exist")
    if csv is None and parquet is None and t4 is None:
        raise GPAutotuneError("give --csv PATH, --parquet PATH and/or --t4 PATH")
    journal = Journal(db, read_only=True)
    for path in (csv, parquet):
        if path is not None:
            console.print(f"wrote {export_table(journal, path, run)}")
    if t4 is not None:
        console.print(f"wrote {export_t4(journal, t4, run, validate=validate)}")


@app.command()
@user_errors
def space(
    config: Annotated[
        Path, typer.Argument(help="YAML tuning file, or a Kernel Tuner cache / T4 file")
    ],
    allow_imports: AllowImports = False,
    set_: Overrides = None,
) -> None:
    """Describe the search space of CONFIG: parameters, raw size, valid count (and, for a
    replayed Kernel Tuner cache or T4 file, the failed rows)."""
    from gpautotune.config import build_problem, load_config

    if config.name.endswith((".json", ".json.gz")):
        from gpautotune.problems.kt_cache import kt_cache_problem

        problem = kt_cache_problem(config)
    else:
        problem = build_problem(
            load_config(config, set_ or ()).problem, allow_imports=allow_imports
        )
    sp = problem.space
    table = Table(title=f"{problem.name}: {sp.dims} parameters")
    table.add_column("parameter")
    table.add_column("kind")
    table.add_column("levels")
    for p in sp.parameters:
        d = p.describe()
        levels = list(p.levels) if p.is_discrete else [d["low"], d["high"]]
        shown = (
            ", ".join(map(_fmt, levels))
            if len(levels) <= 12
            else f"{_fmt(levels[0])} .. {_fmt(levels[-1])} ({len(levels)})"
        )
        kind = d["kind"] + (f" ({d['scale']})" if d.get("scale") in ("log2", "linear") else "")
        table.add_row(p.name, kind, shown)
    console.print(table)
    for c in sp.constraints:
        console.print(f"  constraint: {c.text}")
    with console.status("counting valid configurations"):
        count = sp.count_valid()
    raw = (
        "inf" if math.isinf(sp.size) else f"{sp.size:,.0f}" if sp.size < 1e15 else f"{sp.size:.3e}"
    )
    console.print(f"raw size: {raw}")
    if count.exact:
        console.print(
            f"valid: {count.estimate:,.0f} (exact, {count.fraction:.2%} of the raw space)"
        )
    else:
        console.print(
            f"valid: about {count.estimate:.3e} (95% CI {count.low:.3e} .. {count.high:.3e}; "
            f"{count.fraction:.3%} of raw, estimated from samples)"
        )
    _failed_rows(problem)


def _failed_rows(problem: Any) -> None:
    """The failed rows of a replayed file (each costs an evaluation when proposed)."""
    failures = getattr(problem, "failures", None)
    if failures is None:
        return
    constants = ", ".join(f"{k}={v}" for k, v in getattr(problem, "constants", {}).items())
    if constants:
        console.print(f"constants (single-level keys, not tuned): {constants}")
    kinds = ", ".join(f"{s.value} {n:,}" for s, n in failures.items())
    console.print(
        f"failed: {problem.failed_rows:,} of the valid rows{f' ({kinds})' if kinds else ''}"
    )
    violating, examples = getattr(problem, "violations", (0, []))
    if violating:
        console.print(
            f"rows violating the restrictions (left out): {violating:,}, e.g. {examples[0]}"
        )


@app.command()
@user_errors
def devices() -> None:
    """List OpenCL platforms and devices, and whether each can build kernels."""
    from gpautotune.problems.opencl import compiler_problem, list_devices

    table = Table(title="OpenCL devices")
    for col in (
        "platform",
        "device",
        "name",
        "type",
        "driver",
        "CUs",
        "max work group",
        "builds kernels",
    ):
        table.add_column(col)
    for info in list_devices():
        problem = compiler_problem(info)
        table.add_row(
            f"{info.platform_index}: {info.platform}",
            str(info.device_index),
            info.device,
            info.device_type,
            info.driver_version,
            str(info.compute_units),
            str(info.max_work_group_size),
            "yes" if problem is None else f"no: {problem.splitlines()[0][:60]}",
        )
    console.print(table)


@app.command()
@user_errors
def compare(
    config: Annotated[
        Path, typer.Argument(help="comparison YAML (problems x strategies x repetitions)")
    ],
    scheduler: Annotated[
        str | None, typer.Option(help="a running Dask scheduler, tcp://HOST:PORT")
    ] = None,
    workers: Annotated[int | None, typer.Option(help="local Dask worker processes")] = None,
    db: Annotated[str | None, typer.Option(help="journal replacing the file's storage")] = None,
    out: Annotated[
        Path | None, typer.Option(help="report folder (default: beside the journal)")
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="strategy label the others are compared with")
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option(help="run only the strategies with this label (repeatable)")
    ] = None,
    allow_imports: AllowImports = False,
) -> None:
    """Run (or resume) a repeated comparison on Dask, then write its report."""
    from gpautotune.analysis import analyse, summary_table
    from gpautotune.comparison import load_comparison, run_comparison

    cfg = load_comparison(config, allow_imports=allow_imports)
    with _progress() as progress:
        task = progress.add_task("repetitions", total=None, best="-")

        def on_progress(done: int, total: int, outcome: Any) -> None:
            progress.update(task, completed=done, total=total)

        result = run_comparison(
            config,
            scheduler=scheduler,
            workers=workers,
            progress=on_progress,
            only=only or None,
            storage=db,
            allow_imports=allow_imports,
        )
    console.print(
        f"{result.completed}/{result.total} repetitions finished ({result.skipped} already in the journal), "
        f"{len(result.failed)} failed, {result.wall_s:.0f} s on {result.workers} workers"
    )
    for outcome in result.failed[:5]:
        console.print(f"[red]failed[/]: {outcome}")
    report = analyse(
        result.storage,
        reference=reference or cfg.reference_label(),
        checkpoints=cfg.report_checkpoints(),
    )
    folder = out or cfg.report_dir()
    files = report.write(folder)
    console.print(summary_table(report))
    console.print(f"report: {len(files)} files in {folder}")
    if result.failed:
        raise typer.Exit(code=1)


@app.command()
@user_errors
def report(
    db: Annotated[
        Path, typer.Argument(help="journal of runs (a comparison's storage or any tuning journal)")
    ],
    out: Annotated[
        Path | None, typer.Option(help="report folder (default: beside the journal)")
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="strategy label the others are compared with")
    ] = None,
    checkpoint: Annotated[
        list[int] | None, typer.Option(help="budget to tabulate (repeatable)")
    ] = None,
) -> None:
    """Tables (Markdown, CSV) and figures (PNG) of the runs in a journal."""
    from gpautotune.analysis import analyse, summary_table

    if not db.is_file():
        raise GPAutotuneError(f"journal {str(db)!r} does not exist")
    result = analyse(db, reference=reference, checkpoints=checkpoint or None)
    folder = out or db.with_suffix("")
    files = result.write(folder)
    console.print(summary_table(result))
    console.print(f"report: {len(files)} files in {folder}")


@app.command()
@user_errors
def explain(
    db: Annotated[Path, typer.Argument(help="journal of a finished GPR run")],
    run: Annotated[int | None, typer.Option(help="run id (default: the last run)")] = None,
    out: Annotated[Path | None, typer.Option(help="folder for the bar chart and CSV")] = None,
    domain: Annotated[
        str, typer.Option(help="box (encoded box) or valid (valid configurations only)")
    ] = "box",
    paths: Annotated[int, typer.Option(help="GP posterior sample paths")] = 32,
) -> None:
    """Sobol indices (S1, ST with intervals) of each parameter, from the run's GP."""
    from gpautotune.analysis.explain import explain_run, indices_table

    if not db.is_file():
        raise GPAutotuneError(f"journal {str(db)!r} does not exist")
    with console.status("fitting the GP and computing Sobol indices"):
        table, chart = explain_run(
            db, run, out_dir=out or db.with_suffix(""), domain=domain, paths=paths
        )
    console.print(indices_table(table))
    if chart is not None:
        console.print(f"chart: {chart}")


spapt_app = typer.Typer(
    help="SPAPT-style CPU loop kernels (C generated, compiled with gcc and timed)."
)
app.add_typer(spapt_app, name="spapt")


@spapt_app.command("list")
@user_errors
def spapt_list(
    valid: Annotated[bool, typer.Option(help="also count valid configurations (slower)")] = True,
) -> None:
    """Kernels with their factor counts, raw and valid space sizes."""
    from gpautotune.problems.spapt import list_kernels

    with console.status("counting"):
        rows = list_kernels(valid=valid)
    table = Table(title="SPAPT kernels (problem names spapt/<kernel>)")
    for col in ("kernel", "factors", "raw size", "valid", "thesis Table 12.1"):
        table.add_column(col)
    for r in rows:
        shown = (
            "-"
            if r.valid_size is None
            else f"{r.valid_size:.3g}{'' if r.valid_exact else ' (est.)'}"
        )
        table.add_row(r.name, str(r.factors), f"{r.raw_size:.3g}", shown, r.table_12_1 or "-")
    console.print(table)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
