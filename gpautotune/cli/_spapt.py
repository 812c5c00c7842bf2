"""``gpautotune spapt``: the SPAPT-style CPU loop kernels."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from gpautotune.cli._app import console, user_errors

spapt_app = typer.Typer(
    help="SPAPT-style CPU loop kernels (C generated, compiled with gcc and timed)."
)


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
