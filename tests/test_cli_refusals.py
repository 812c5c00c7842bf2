"""Mistakes the command line refuses in one line before it draws a progress bar or leaves
a file behind, and what `report` and `compare` say of runs that never succeeded."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.problems import Measurement, Status
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.tuner import TuningRun

runner = CliRunner()

COMPARISON = """
problems: [{name: booth}]
strategies: [{name: random, label: RS}]
repetitions: 2
budget: 4
storage: STORAGE
"""


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def comparison(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(COMPARISON.replace("STORAGE", str(tmp_path / "c.db")))
    return path


def test_tune_names_a_comparison_file(comparison):
    out = runner.invoke(app, ["tune", str(comparison)])
    assert out.exit_code == 2
    assert _flat(out.output).endswith(
        f"error: {comparison}: this is a comparison file (it has `problems`/`strategies`): "
        f"run `gpautotune compare {comparison}`"
    )
    assert "Extra inputs" not in out.output


def test_compare_names_a_tuning_file(booth_yaml):
    out = runner.invoke(app, ["compare", str(booth_yaml)])
    assert out.exit_code == 2 and f"run `gpautotune tune {booth_yaml}`" in _flat(out.output)


@pytest.mark.parametrize("key", ["seed", "budget", "batch_size"])
def test_true_is_no_number(booth_yaml, tmp_path, key):
    out = runner.invoke(app, ["tune", str(booth_yaml), "--set", f"{key}=true"])
    assert out.exit_code == 2
    assert f"{key}: must be an integer; true/false is not one" in _flat(out.output)
    assert not (tmp_path / "b.db").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--budget", "-3"], "--budget must be a positive number of evaluations, got -3"),
        (["--set", "warm_start=missing.csv"], "warm-start file 'missing.csv' does not exist"),
        (["--workers", "0"], "--workers must be >= 1, got 0"),
    ],
)
def test_tune_refuses_before_the_progress_bar(booth_yaml, tmp_path, options, message):
    out = runner.invoke(app, ["tune", str(booth_yaml), *options])
    assert out.exit_code == 2 and _flat(out.output).endswith(f"error: {message}")
    assert "tuning" not in out.output and "journal" not in out.output  # no bar, no header
    assert not (tmp_path / "b.db").exists()


def test_compare_refuses_an_unknown_problem_before_the_progress_bar(comparison, tmp_path):
    out = runner.invoke(app, ["compare", str(comparison), "--problem", "nope"])
    assert out.exit_code == 2
    assert _flat(out.output).endswith(
        "error: no problem called ['nope']; the comparison has ['booth']"
    )
    assert "repetitions" not in out.output  # no bar
    assert not (tmp_path / "c.db").exists()
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # nor an empty report folder


def test_report_on_a_journal_without_runs_writes_nothing(tmp_path):
    db = tmp_path / "fresh.db"
    Journal(db).close()
    out = runner.invoke(app, ["report", str(db), "--out", str(tmp_path / "rep")])
    assert out.exit_code == 2
    assert _flat(out.output).endswith(f"error: no finished run in {db}: no report written")
    assert not (tmp_path / "rep").exists()


def test_show_says_there_is_no_run_of_that_name(booth_yaml, tmp_path):
    db = str(tmp_path / "b.db")
    for name in ("first", "second"):
        runner.invoke(app, ["tune", str(booth_yaml), "--name", name])
    out = runner.invoke(app, ["show", db, "--name", "nope"])
    assert out.exit_code == 2
    assert _flat(out.output).endswith(
        f"error: no run called 'nope' in {db}; the journal's run names: ['first', 'second']"
    )
    out = runner.invoke(app, ["show", db, "--name", "first", "--run", "2"])
    assert out.exit_code == 2 and f"no run called 'first' in run 2 of {db}" in _flat(out.output)
    assert runner.invoke(app, ["show", db, "--name", "second"]).exit_code == 0


def test_merge_checks_its_sources_before_making_the_target(booth_yaml, tmp_path):
    runner.invoke(app, ["tune", str(booth_yaml)])
    other = tmp_path / "other.db"
    other.write_bytes(b"not a journal")
    for missing in (tmp_path / "missing.db", other):
        into = tmp_path / "into.db"
        out = runner.invoke(app, ["merge", str(into), str(tmp_path / "b.db"), str(missing)])
        assert out.exit_code == 2 and not into.exists(), out.output


def test_report_names_the_strategies_that_never_succeeded(tmp_path):
    db = tmp_path / "failed.db"
    space = Space([IntRange("x", 0, 9)], name="c-kernel")
    for label in ("RS", "GPR"):
        for seed in range(2):
            run = TuningRun(space, "random", storage=db, seed=seed, budget=3, label=label)
            for x in range(3):
                run.tell({"x": x}, Measurement.failure(Status.BUILD_ERROR, "undeclared"))
            run.finish()
    out = runner.invoke(app, ["report", str(db), "--out", str(tmp_path / "rep")])
    assert out.exit_code == 0, out.output
    assert _flat(out.output).endswith(
        "warning: no successful evaluation in any run of c-kernel (RS, GPR; failed: build_error 12)"
    )
    assert "too few repetitions" not in out.output
