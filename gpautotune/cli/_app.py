"""The Typer app, its ``--version`` callback, the shared options and output helpers."""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpautotune.exceptions import ConfigError, GPAutotuneError

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
Reference = Annotated[str | None, typer.Option(help="strategy label the others are compared with")]
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


def journal_file(db: str) -> Path:
    """The existing journal file that ``db`` (a path or ``sqlite:///`` URL) names."""
    from gpautotune.storage import journal_path

    path = journal_path(db)
    if path == ":memory:" or not Path(path).is_file():
        raise GPAutotuneError(f"journal {db!r} does not exist")
    return Path(path)


def output_folder(path: Path, what: str, *, make: bool = True) -> Path:
    """``path`` made ready as the folder to write ``what`` into (created if missing; with
    ``make=False`` only checked: no file in the way, and the nearest existing folder
    writable), or a one-line error saying why it cannot be."""
    for folder in (path, *path.parents):
        if folder.exists():
            if not folder.is_dir():
                raise ConfigError(
                    f"cannot write {what} into {str(path)!r}: {str(folder)!r} is a file; "
                    "give a folder"
                )
            if not make and not os.access(folder, os.W_OK | os.X_OK):
                raise ConfigError(
                    f"cannot write {what} into {str(path)!r}: {str(folder)!r} is not "
                    "writable; give another folder"
                )
            break
    if not make:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {what} into {str(path)!r}: {exc.strerror or exc}; give another folder"
        ) from None
    return path


def output_file(path: Path, what: str) -> Path:
    """``path`` checked as a file to write ``what`` to (its folder created if missing)."""
    if path.is_dir():
        raise ConfigError(f"cannot write {what} to {str(path)!r}: it is a folder; give a file name")
    output_folder(path.parent, what)
    return path


def _one_line_warning(message: Warning | str, *_: Any, **__: Any) -> None:
    """A warning as one line ``warning: ...`` (not the file and source line Python shows)."""
    err_console.print(
        f"[yellow]warning:[/] {message}", highlight=False, soft_wrap=True, markup=True
    )


def user_errors(fn: F) -> F:
    """Print a gpautotune error as one line and exit with code 2 (no traceback); end
    cleanly on SIGTERM/SIGHUP."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from gpautotune.execution import signals_end_cleanly

        try:
            with signals_end_cleanly(), warnings.catch_warnings():
                warnings.showwarning = _one_line_warning
                return fn(*args, **kwargs)
        except GPAutotuneError as exc:
            err_console.print(  # the message is text, not markup ('[width, height]')
                f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(code=2) from None

    return wrapper  # type: ignore[return-value]


def fmt(value: Any) -> str:
    """A value as a table cell: floats with 6 significant digits."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def config_table(title: str, config: dict[str, Any]) -> Table:
    """A configuration as a two-column table (parameter, value), at least as wide as its
    title (a title wider than short names and values would wrap mid-phrase)."""
    table = Table(title=title, show_header=True, min_width=len(title))
    table.add_column("parameter")
    table.add_column("value")
    for k, v in config.items():
        table.add_row(k, fmt(v))
    return table
