"""Commands that look things up: ``list``, ``show``, ``export``, ``merge``, ``space``,
``devices``, ``explain``."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from gpautotune.cli._app import (
    AllowImports,
    Overrides,
    console,
    fmt,
    journal_file,
    output_file,
    output_folder,
    user_errors,
)
from gpautotune.exceptions import GPAutotuneError
from gpautotune.progress import ProgressBar


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

    if top < 0:
        raise GPAutotuneError(f"--top must be 0 or more, got {top}")
    journal = Journal(journal_file(db), read_only=True)
    runs = [journal.get_run(run)] if run is not None else journal.runs()
    if name is not None:
        _check_named(journal, runs, name, db if run is None else f"run {run} of {db}")
        runs = [r for r in runs if r.label == name]
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
            fmt(best.value) if best else "-",
            "interrupted" if r.status == "running" and not journal.owned(r.id) else r.status,
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
            table.add_row(str(t.number), fmt(t.value), *(fmt(t.config[n]) for n in names))
        console.print(table)


def _check_named(journal: Any, runs: list[Any], name: str, where: str) -> None:
    """Refuse a ``--name`` no run (of those shown) has, listing the names there are."""
    if any(r.label == name for r in runs):
        return
    names = sorted({r.label for r in journal.runs() if r.label})
    there = f"the journal's run names: {names}" if names else "no run of the journal has a name"
    raise GPAutotuneError(f"no run called {name!r} in {where}; {there}")


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
    from gpautotune.storage import Journal, check_not_journal, export_t4, export_table

    file = journal_file(db)
    if csv is None and parquet is None and t4 is None:
        raise GPAutotuneError("give --csv PATH, --parquet PATH and/or --t4 PATH")
    journal = Journal(file, read_only=True)
    tables = {"csv": csv, "parquet": parquet}  # the option names the format, not the suffix
    for path in (*tables.values(), t4):  # every output checked before any is written
        if path is not None:
            check_not_journal(journal.path, path, "export")
            output_file(path, "the export")
    for format, path in tables.items():
        if path is not None:
            console.print(f"wrote {export_table(journal, path, run, format=format)}")
    if t4 is not None:
        console.print(f"wrote {export_t4(journal, t4, run, validate=validate)}")


@user_errors
def merge(
    into: Annotated[str, typer.Argument(help="journal to copy into (made if missing)")],
    sources: Annotated[list[str], typer.Argument(help="journals to copy the finished runs of")],
    label: Annotated[
        list[str] | None, typer.Option(help="only the runs with this label (repeatable)")
    ] = None,
    problem: Annotated[
        list[str] | None,
        typer.Option(help="only the runs of this problem or family, e.g. gemm (repeatable)"),
    ] = None,
) -> None:
    """Copy the finished runs of other journals, with their trials, into INTO: the parts of
    a comparison run on several machines joined into one journal for `report`. Runs INTO
    holds already (the same run, or the same replayed data read from another folder) are
    skipped. The comparison's report settings (checkpoints, reference, label order, output
    folder) come with the runs where INTO has none; where journals disagree, the first
    one's stay, with a warning."""
    from gpautotune.problems import in_family
    from gpautotune.storage import Journal

    def keep(run: Any) -> bool:
        return (not label or run.label in label) and (
            not problem or any(in_family(run.problem, name) for name in problem)
        )

    for source in sources:  # every source is checked before INTO is made
        with Journal(journal_file(source), read_only=True):
            pass
    with Journal(into) as target:
        given = {k: into for k, v in target.report_settings().items() if v is not None}
        for source in sources:
            with Journal(journal_file(source), read_only=True) as journal:
                _disagreements(target.report_settings(), journal.report_settings(), given, source)
                copied, skipped = target.copy_runs(journal, keep)
            console.print(f"{source}: {copied} runs copied, {skipped} already in {into}")


def _disagreements(
    held: dict[str, Any], theirs: dict[str, Any], given: dict[str, str], source: str
) -> None:
    """Warn of each report setting of ``source`` (``theirs``) other than the one the
    merged journal holds, naming the journal that gave it (``given``, updated with the
    settings ``source`` gives)."""
    for key, value in theirs.items():
        if value is None:
            continue
        if held.get(key) is None:
            given[key] = source
        elif held[key] != value:
            warnings.warn(
                f"the report's {key} differs: {value!r} in {source}, {held[key]!r} in "
                f"{given[key]}; kept {given[key]}'s",
                stacklevel=2,
            )


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

        if set_:  # a bare file has no keys to override; the problem's options live in YAML
            raise GPAutotuneError(
                f"--set needs a YAML tuning file, and {config} is a Kernel Tuner cache or T4 "
                f"file: write a YAML file with `problem: {{name: kt-cache, path: {config}}}` "
                "and its options (objective, direction, restrictions), then run `gpautotune "
                "space` on it"
            )
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
            ", ".join(map(fmt, levels))
            if len(levels) <= 12
            else f"{fmt(levels[0])} .. {fmt(levels[-1])} ({len(levels)})"
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
    """The failed rows of a replayed file (each costs an evaluation when proposed), and
    the rows a replayed table or file left out (outside the levels, repeated, ...)."""
    dropped, duplicates = getattr(problem, "dropped_rows", 0), getattr(problem, "duplicate_rows", 0)
    left_out, why = getattr(problem, "left_out", (0, ""))
    if left_out:
        console.print(f"records left out of the file: {left_out:,} ({why})")
    if dropped:
        console.print(
            f"rows left out (not levels of the space): {dropped:,}, e.g. {problem.first_dropped}"
        )
    if duplicates:
        console.print(f"repeated configurations (the first row of each kept): {duplicates:,}")
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
    """Sobol indices (S1, ST with intervals) of each parameter, from the run's GP; the
    chart and CSV go to --out (default: the journal's name without its suffix, beside
    it, e.g. `runs` for `runs.db`; `<name>-explain` for a journal with no suffix)."""
    from gpautotune.sensitivity import check_domain, check_paths

    check_domain(domain)  # before the run is read and its GP fitted
    check_paths(paths)
    from gpautotune.analysis.explain import EXPLAIN_STEPS, explain_run, indices_table

    file = journal_file(db)
    folder = output_folder(out or _explain_folder(file), "the explanation", make=False)
    with ProgressBar("explaining", EXPLAIN_STEPS, console=console, transient=True) as bar:
        table, chart = explain_run(
            file,
            run,
            out_dir=folder,
            domain=domain,
            paths=paths,
            progress=lambda i, what: bar.update(i, description=what),
        )
    if not table.attrs.get("constant"):  # a constant objective: its warning said it all
        console.print(indices_table(table))
    if chart is not None:
        console.print(f"chart: {chart}")


def _explain_folder(journal: Path) -> Path:
    """The default folder of ``explain``: the journal's path without its suffix
    (``runs.db`` -> ``runs``), or ``<name>-explain`` beside a journal with no suffix
    (never the journal itself)."""
    folder = journal.with_suffix("")
    return folder if folder != journal else journal.with_name(f"{journal.name}-explain")
