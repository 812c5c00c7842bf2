"""The command line: thin wrappers that parse, call the API and print (Typer + Rich).

Each module holds a group of commands as plain functions; they are registered on
:data:`app` here, in the order ``gpautotune --help`` lists them.
"""

from __future__ import annotations

from gpautotune.cli._app import app, user_errors
from gpautotune.cli._compare import compare, report
from gpautotune.cli._inspect import devices, explain, export, list_, merge, show, space
from gpautotune.cli._spapt import spapt_app
from gpautotune.cli._tune import tune

__all__ = ["app", "main", "user_errors"]

app.command()(tune)
app.command("list")(list_)
for _command in (show, export, merge, space, devices, compare, report, explain):
    app.command()(_command)
app.add_typer(spapt_app, name="spapt")


def main() -> None:
    """Run the command line as the ``gpautotune`` script."""
    app(prog_name="gpautotune")
