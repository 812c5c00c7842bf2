"""``gpautotune compare`` (run a comparison on Dask) and ``report`` (write a journal's
report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from gpautotune.cli._app import (
    AllowImports,
    DaskScheduler,
    DaskWorkers,
    Reference,
    console,
    journal_file,
    output_folder,
    user_errors,
)
from gpautotune.exceptions import ConfigError
from gpautotune.progress import ProgressBar

#: Failed repetitions listed after a comparison (the others are counted).
_FAILURES_SHOWN = 10


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
    reference: Reference = None,
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
    from gpautotune.comparison import load_comparison, run_comparison
    from gpautotune.storage import journal_path

    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    # The report's folder is checked before the repetitions run, not after.
    folder = out
    path = None if db is None else journal_path(db)
    if folder is None and path != ":memory:":
        folder = load_comparison(
            config, allow_imports=allow_imports, only=only or None, storage=path
        ).report_dir()
    if folder is not None:
        output_folder(folder, "the report")
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
    for outcome in result.failed[:_FAILURES_SHOWN]:  # one line each, as errors are
        console.print(
            f"[red]failed[/]: {escape(outcome.describe())}", highlight=False, soft_wrap=True
        )
    if len(result.failed) > _FAILURES_SHOWN:
        console.print(f"and {len(result.failed) - _FAILURES_SHOWN} more failed repetitions")
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
    folder = output_folder(out or report_dir(storage), "the report")
    with console.status(f"writing tables and figures into {folder}"):
        files = result.write(folder)
    console.print(summary_table(result))
    console.print(f"report: {len(files)} files in {folder}")


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
    reference: Reference = None,
    checkpoint: Annotated[
        list[int] | None,
        typer.Option(help="budget to tabulate (repeatable; default: the comparison's)"),
    ] = None,
) -> None:
    """Tables (Markdown, CSV) and figures (PNG) of the runs in a journal; for a
    comparison's journal, the same report as `compare` writes."""
    _write_report(str(journal_file(db)), out, reference, checkpoint or None)
