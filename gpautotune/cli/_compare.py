"""``gpautotune compare`` (run a comparison on Dask) and ``report`` (write a journal's
report)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
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
from gpautotune.exceptions import ConfigError, GPAutotuneError
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
    if folder is not None:  # made when the report is written: a refused file leaves none
        output_folder(folder, "the report", make=False)
    with _repetitions_bar() as on_progress:
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
    _write_report(result.storage, out, reference, None, required=not result.failed)
    if result.failed:
        raise typer.Exit(code=1)


@contextmanager
def _repetitions_bar() -> Iterator[Callable[[int, int, Any], None]]:
    """``run_comparison``'s progress callback: a spinner while the comparison is checked
    and its problems built, the repetitions' bar from its first report on (so that a
    mistake the checks find is one line, with no bar drawn before it)."""
    status = console.status("checking the comparison")
    bar: ProgressBar | None = None
    failed = 0
    with ExitStack() as stack:
        status.start()
        stack.callback(status.stop)

        def on_progress(done: int, total: int, outcome: Any) -> None:
            nonlocal bar, failed
            if bar is None:
                status.stop()
                bar = stack.enter_context(ProgressBar("repetitions", total, console=console))
            failed += outcome is not None and not outcome.ok
            bar.update(done, total=total, status=f"{failed} failed" if failed else "")

        yield on_progress


def _write_report(
    storage: str,
    out: Path | None,
    reference: str | None,
    checkpoints: list[int] | None,
    *,
    required: bool = True,
) -> None:
    """Analyse a journal (with the comparison's stored settings) and write its report,
    then say which problems and strategies never had a successful evaluation.

    Raises:
        GPAutotuneError: the journal holds no finished run (nothing is written; with
            ``required=False``, said in a line instead: the failures said why).
    """
    from gpautotune.analysis import analyse, report_dir, summary_table

    with console.status("analysing the runs"):
        result = analyse(storage, reference=reference, checkpoints=checkpoints)
    if not result.runs.groups:
        unfinished = result.runs.unfinished
        message = f"no finished run in {storage}: no report written" + (
            f" ({unfinished} unfinished: resume them to report them)" if unfinished else ""
        )
        if required:
            raise GPAutotuneError(message)
        console.print(escape(message), highlight=False, soft_wrap=True)
        return
    folder = output_folder(out or report_dir(storage), "the report")
    with console.status(f"writing tables and figures into {folder}"):
        files = result.write(folder)
    console.print(summary_table(result))
    console.print(f"report: {len(files)} files in {folder}")
    never = result.never_succeeded_text()
    if never:
        console.print(f"[yellow]warning:[/] {escape(never)}", highlight=False, soft_wrap=True)


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
