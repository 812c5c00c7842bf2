"""The command line: thin wrappers that parse, call the API and print (Typer + Rich)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpautotune.exceptions import GPAutotuneError
from gpautotune.progress import ProgressBar, best_text

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    help="gpautotune: Bayesian-optimization autotuning with Gaussian processes.\n\n"
    "Start with `gpautotune list` (problems and strategies, with their options) and "
    "`gpautotune tune FILE.yaml`; `gpautotune COMMAND -h` explains each command.",
    no_args_is_help=True,
    add_completion=False,
    context_settings=HELP_OPTIONS,
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
DaskScheduler = Annotated[
    str | None, typer.Option(help="a running Dask scheduler, tcp://HOST:PORT")
]
DaskWorkers = Annotated[int | None, typer.Option(help="local Dask worker processes")]
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="override a key of the file, e.g. problem.sizes.n=4096 (repeatable)"
    ),
]


def _version(value: bool) -> None:
    if value:
        from gpautotune.version import __version__

        console.print(f"gpautotune {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    """The options every command shares (``--version``)."""


def _journal_file(db: str) -> Path:
    """The existing journal file that ``db`` (a path or ``sqlite:///`` URL) names."""
    from gpautotune.storage import journal_path

    path = journal_path(db)
    if path == ":memory:" or not Path(path).is_file():
        raise GPAutotuneError(f"journal {db!r} does not exist")
    return Path(path)


def user_errors(fn: F) -> F:
    """Print a gpautotune error as one line and exit with code 2 (no traceback); end
    cleanly on SIGTERM/SIGHUP."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from gpautotune.execution import signals_end_cleanly

        try:
            with signals_end_cleanly():
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
            "a name is refused with other settings"
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
    from gpautotune.tuner import tune as run_tune

    cfg = load_config(config, set_ or ())
    updates = {"budget": budget, "storage": db, "seed": seed, "label": name}
    cfg = cfg.model_copy(update={k: v for k, v in updates.items() if v is not None})
    with console.status(f"preparing {cfg.problem.name}"):
        problem = build_problem(cfg.problem, allow_imports=allow_imports)
        strategy = build_strategy(cfg.strategy, problem, cfg.seed)
    storage = cfg.storage_path()
    _check_name(storage, problem, strategy, cfg.seed, cfg.label)
    named = f", name {cfg.label!r}" if cfg.label else ""
    console.print(
        f"[bold]{problem.name}[/] with [bold]{strategy.name}[/], budget {cfg.budget}, "
        f"seed {cfg.seed}{named}, journal {storage}"
    )
    with (
        _cluster(workers, scheduler, devices) as client,
        ProgressBar("tuning", cfg.budget, console=console) as bar,
    ):
        if client is not None:
            console.print(f"evaluating on the Dask workers of {client.scheduler.address}")
        bar.update(0, status=best_text(None))

        def on_trial(trial: Any, run: Any) -> None:
            bar.update(run.used, status=best_text(run.best.value if run.best else None))

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
            load_if_exists=resume,
            client=client,
        )
        bar.update(result.used)
    _summary(problem, result)
    _baseline_speedup(problem, result)


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


def _check_name(storage: str, problem: Any, strategy: Any, seed: Any, label: Any) -> None:
    """Refuse a run name that the journal already gives a run with other settings."""
    from gpautotune.storage import Journal, journal_path
    from gpautotune.tuner import name_clash, run_spec

    path = journal_path(storage)
    if label is None or path == ":memory:" or not Path(path).is_file():
        return
    with Journal(path, read_only=True) as journal:
        clash = name_clash(journal, run_spec(problem, strategy, seed=seed, label=label))
    if clash is not None:
        raise GPAutotuneError(
            f"run name {label!r} is taken in {storage} by run {clash.id} "
            f"({clash.describe()}) with other settings; give another --name, or the same "
            "settings to resume it"
        )


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
    console.print(_config_table(f"best of run {result.run_id} (trial {best.number})", best.config))
    line = f"best value {best.value:.6g}"
    optimum = getattr(problem, "optimum", None)
    if optimum is not None and math.isfinite(optimum) and optimum != 0:
        line += f"; known optimum {optimum:.6g}; slowdown {best.value / optimum:.4f}"
    for key in problem.report_metrics:
        if key in best.measurement.metrics:
            line += f"; {key} {_fmt(best.measurement.metrics[key])}"
    console.print(line)


@app.command("list")
@user_errors
def list_(
    name: Annotated[
        str | None,
        typer.Argument(
            help="`problems`, `strategies`, or one problem or strategy to show in detail"
        ),
    ] = None,
) -> None:
    """Problems and strategies with their options and defaults (what a tuning file's
    `problem:` and `strategy:` sections take)."""
    from gpautotune.catalog import entries, find_entry, options_table, overview_table

    with console.status("reading the problems' and strategies' options"):
        kinds = {"problems": "problem", "strategies": "strategy"}
        if name is None or name in kinds:
            shown = [k for k in kinds if name in (None, k)]
            tables = [overview_table(entries(kinds[k]), k) for k in shown]  # type: ignore[arg-type]
        else:
            tables = [options_table(e) for e in find_entry(name)]
    for table in tables:
        console.print(table)
    if name is None:
        console.print("`gpautotune list NAME` shows one problem or strategy in detail.")


@app.command()
@user_errors
def show(
    db: Annotated[str, typer.Argument(help="trial journal (a path or sqlite:///PATH)")],
    run: Annotated[int | None, typer.Option(help="only this run id")] = None,
    name: Annotated[str | None, typer.Option(help="only the runs of this name")] = None,
    top: Annotated[int, typer.Option(help="best trials to list per run")] = 5,
) -> None:
    """List the runs of a journal (with their names) and their best trials."""
    from gpautotune.storage import Journal
    from gpautotune.tuner import best_trial

    journal = Journal(_journal_file(db), read_only=True)
    runs = [journal.get_run(run)] if run is not None else journal.runs()
    runs = [r for r in runs if name is None or r.label == name]
    overview = Table(title=f"runs in {db}")
    columns = ("run", "name", "problem", "strategy", "seed", "budget", "used", "failed", "best")
    for col in (*columns, "status"):
        overview.add_column(col)
    details = []
    for r in runs:
        trials = journal.trials(r.id)
        counted = [t for t in trials if t.counts_in_budget]
        best = best_trial(trials)
        overview.add_row(
            str(r.id),
            r.label or "-",
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
        named = f" ({r.label})" if r.label else ""
        table = Table(title=f"run {r.id}{named}: best {len(best)} trials")
        names = list(best[0].config)
        for col in ("trial", "value", *names):
            table.add_column(col, no_wrap=col in ("trial", "value"))
        for t in best:
            table.add_row(str(t.number), _fmt(t.value), *(_fmt(t.config[n]) for n in names))
        console.print(table)


@app.command()
@user_errors
def export(
    db: Annotated[str, typer.Argument(help="trial journal (a path or sqlite:///PATH)")],
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
    """Export the trials of a journal as CSV, Parquet and/or T4 (Kernel Tuner's results
    format); tables carry each run's name in the `label` column."""
    from gpautotune.storage import Journal, export_t4, export_table

    file = _journal_file(db)
    if csv is None and parquet is None and t4 is None:
        raise GPAutotuneError("give --csv PATH, --parquet PATH and/or --t4 PATH")
    journal = Journal(file, read_only=True)
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
    scheduler: DaskScheduler = None,
    workers: DaskWorkers = None,
    db: Annotated[str | None, typer.Option(help="journal replacing the file's storage")] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="report folder (default: the file's `output`, else beside the journal)"),
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="strategy label the others are compared with")
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option(help="run only the strategies with this label (repeatable)")
    ] = None,
    problem: Annotated[
        list[str] | None,
        typer.Option(
            help="run only the problems of this name or family, e.g. gemm for gemm/* (repeatable)"
        ),
    ] = None,
    allow_imports: AllowImports = False,
) -> None:
    """Run (or resume) a repeated comparison on Dask, then write its report."""
    from gpautotune.comparison import run_comparison

    with ProgressBar("repetitions", None, console=console) as bar:

        def on_progress(done: int, total: int, outcome: Any) -> None:
            failed[0] += outcome is not None and not outcome.ok
            bar.update(done, total=total, status=f"{failed[0]} failed" if failed[0] else "")

        failed = [0]
        result = run_comparison(
            config,
            scheduler=scheduler,
            workers=workers,
            progress=on_progress,
            only=only or None,
            storage=db,
            problems_only=problem or None,
            allow_imports=allow_imports,
        )
    console.print(
        f"{result.completed}/{result.total} repetitions finished "
        f"({result.skipped} already in the journal), "
        f"{len(result.failed)} failed, {result.wall_s:.0f} s on {result.workers} workers"
    )
    for outcome in result.failed[:5]:
        console.print(f"[red]failed[/]: {outcome}")
    _write_report(result.storage, out, reference, None)
    if result.failed:
        raise typer.Exit(code=1)


def _write_report(
    storage: str, out: Path | None, reference: str | None, checkpoints: list[int] | None
) -> None:
    """Analyse a journal (with the comparison's stored settings) and write its report."""
    from gpautotune.analysis import analyse, report_dir, summary_table

    with console.status("analysing the runs"):
        result = analyse(storage, reference=reference, checkpoints=checkpoints)
    folder = out or report_dir(storage)
    with console.status(f"writing tables and figures into {folder}"):
        files = result.write(folder)
    console.print(summary_table(result))
    console.print(f"report: {len(files)} files in {folder}")


@app.command()
@user_errors
def report(
    db: Annotated[
        str,
        typer.Argument(help="journal of runs (a comparison's storage or any tuning journal)"),
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="report folder (default: the comparison's, as `compare` writes)"),
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="strategy label the others are compared with")
    ] = None,
    checkpoint: Annotated[
        list[int] | None,
        typer.Option(help="budget to tabulate (repeatable; default: the comparison's)"),
    ] = None,
) -> None:
    """Tables (Markdown, CSV) and figures (PNG) of the runs in a journal; for a
    comparison's journal, the same report as `compare` writes."""
    _write_report(str(_journal_file(db)), out, reference, checkpoint or None)


@app.command()
@user_errors
def explain(
    db: Annotated[str, typer.Argument(help="journal of a finished GPR run")],
    run: Annotated[int | None, typer.Option(help="run id (default: the last run)")] = None,
    out: Annotated[Path | None, typer.Option(help="folder for the bar chart and CSV")] = None,
    domain: Annotated[
        str, typer.Option(help="box (encoded box) or valid (valid configurations only)")
    ] = "box",
    paths: Annotated[int, typer.Option(help="GP posterior sample paths")] = 32,
) -> None:
    """Sobol indices (S1, ST with intervals) of each parameter, from the run's GP."""
    from gpautotune.analysis.explain import EXPLAIN_STEPS, explain_run, indices_table

    file = _journal_file(db)
    with ProgressBar("explaining", EXPLAIN_STEPS, console=console, transient=True) as bar:
        table, chart = explain_run(
            file,
            run,
            out_dir=out or file.with_suffix(""),
            domain=domain,
            paths=paths,
            progress=lambda i, what: bar.update(i, description=what),
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
    app(prog_name="gpautotune")


if __name__ == "__main__":
    main()
