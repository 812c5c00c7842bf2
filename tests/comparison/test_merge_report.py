"""`gpautotune merge` of a comparison's parts (run with `--only`): the merged journal
reports as the whole comparison would (its checkpoints, reference, label order, output
folder), and parts that disagree are named. The repetitions run in this process (no Dask
cluster: a second)."""

from __future__ import annotations

import contextlib
import sqlite3
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpautotune.analysis import analyse, report_dir
from gpautotune.cli import app
from gpautotune.comparison import _run, run_comparison

runner = CliRunner()

COMPARISON = """
problems: [{name: booth}]
strategies:
  - {name: random, label: RS}
  - {name: sobol, label: Sobol}
repetitions: 3
budget: 8
seed: 1
storage: whole.db
checkpoints: [3, 8]
reference: Sobol
"""


class _Done:
    """A task run at once, in this process (what ``_run`` uses of a Dask future)."""

    def __init__(self, fn: Any, *args: Any) -> None:
        self._value = fn(*args)

    def result(self) -> Any:
        return self._value

    def release(self) -> None:
        pass


class _HereClient:
    def scheduler_info(self) -> dict[str, Any]:
        return {"workers": {"here": {}}}

    def submit(self, fn: Any, *args: Any, **_options: Any) -> _Done:
        return _Done(fn, *args)


@contextlib.contextmanager
def _here(*_args: Any, **_kwargs: Any) -> Iterator[_HereClient]:
    yield _HereClient()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_run, "dask_client", _here)
    monkeypatch.setattr(_run, "as_completed", iter)
    (tmp_path / "c.yaml").write_text(textwrap.dedent(COMPARISON))
    renamed = COMPARISON.replace("label: RS", "label: RandomS").replace(
        "reference: Sobol", "reference: RandomS"
    )
    (tmp_path / "renamed.yaml").write_text(textwrap.dedent(renamed))
    return tmp_path


def _merge(*args: str) -> str:
    """`gpautotune merge ARGS`, with UserWarning shown as in a fresh process (a Sobol run
    earlier in this one may have left it ignored; see :func:`_part`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("default", UserWarning)
        result = runner.invoke(app, ["merge", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _part(config: str, label: str, db: str) -> None:
    """What `gpautotune compare CONFIG --only LABEL --db DB` runs (without its report).
    The warnings filters are restored after it, as if it ran in a worker process: a Sobol
    stream left suspended inside ``warnings.catch_warnings`` leaves UserWarning ignored."""
    with warnings.catch_warnings():
        result = run_comparison(config, only=[label], storage=db)
    assert result.completed == 3 and not result.failed


def test_merged_parts_report_as_the_whole_comparison(folder):
    _part("c.yaml", "RS", "part-a.db")
    _part("c.yaml", "Sobol", "part-b.db")
    assert "warning" not in _merge("joined.db", "part-a.db", "part-b.db")
    report = analyse("joined.db")  # what `gpautotune report joined.db` writes
    assert report.reference == {"booth": "Sobol"} and report.checkpoints == {"booth": [3, 8]}
    assert set(report.pairwise["reference"]) == {"Sobol"}
    assert sorted(set(report.summary["budget"])) == [3, 8]
    assert list(dict.fromkeys(report.summary["strategy"])) == ["RS", "Sobol"]  # the file's
    assert report_dir("joined.db") == Path("joined-report")
    stored = dict(sqlite3.connect(folder / "joined.db").execute("SELECT * FROM report_settings"))
    assert stored == {"checkpoints": "[3, 8]", "reference": '"Sobol"', "labels": '["RS", "Sobol"]'}


def test_an_output_folder_is_carried(folder):
    (folder / "out.yaml").write_text(textwrap.dedent(COMPARISON) + "output: there\n")
    _part("out.yaml", "RS", "part-a.db")
    _merge("joined.db", "part-a.db")
    assert report_dir("joined.db") == folder / "there"  # stored resolved


def test_parts_that_disagree_are_named_and_the_first_kept(folder):
    _part("c.yaml", "Sobol", "part-a.db")
    _part("renamed.yaml", "RandomS", "part-b.db")
    merged = _merge("joined.db", "part-a.db", "part-b.db")
    assert (
        "warning: the report's reference differs: 'RandomS' in part-b.db, 'Sobol' in "
        "part-a.db; kept part-a.db's" in merged
    )
    assert "the report's labels differs" in merged and "checkpoints" not in merged
    again = _merge("joined.db", "part-b.db")  # joined.db's own settings stay
    assert "'Sobol' in joined.db; kept joined.db's" in again
    assert analyse("joined.db").reference == {"booth": "Sobol"}
