"""What a comparison report says at the edges: an optimum of 0 or below, strategies none of
whose evaluations succeeded, and intervals resting on too few repetitions."""

from __future__ import annotations

import pytest
from rich.console import Console

from gpautotune.analysis import analyse, summary_table
from gpautotune.analysis._report import FEW_MARK, FEW_NOTE, markdown
from gpautotune.problems import Measurement, Status
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.tuner import TuningRun


def _journal(db, runs, optimum=None, name="toy"):
    """``runs``: label -> list of value lists (one per seed; None is a build error)."""
    space = Space([IntRange("x", 0, 9)], name=name)
    for label, repetitions in runs.items():
        for seed, values in enumerate(repetitions):
            run = TuningRun(space, "random", storage=db, seed=seed, budget=len(values), label=label)
            for x, v in enumerate(values):
                failed = Measurement.failure(Status.BUILD_ERROR, "undeclared")
                run.tell({"x": x}, failed if v is None else v)
            run.finish()
    if optimum is not None:
        with Journal(db) as journal:
            journal.record_problem(name, {}, {"name": name}, optimum)
    return db


def _text(renderable) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return " ".join(console.export_text().split())


@pytest.mark.parametrize("optimum", [0.0, -6.3, 2.5])
def test_the_share_at_the_optimum_is_given_whatever_the_optimums_sign(tmp_path, optimum):
    runs = {"A": [[optimum + 3, optimum], [optimum + 2, optimum + 1]]}
    report = analyse(_journal(tmp_path / "j.db", runs, optimum), checkpoints=[1, 2])
    at = report.summary.set_index("budget")["at_optimum"]
    assert at[1] == 0 and at[2] == 0.5
    lines = [line.split(" | ") for line in markdown(report).splitlines()]
    column = next(row for row in lines if "at optimum" in row).index("at optimum")
    assert [row[column] for row in lines if row[0] == "| A"] == ["0.000", "0.5000"]


def test_strategies_whose_evaluations_all_failed_are_said_to_be_so(tmp_path):
    runs = {"RS": [[None, None, None]] * 2, "GPR": [[None] * 3] * 2, "OK": [[3, None, 1]] * 2}
    report = analyse(_journal(tmp_path / "j.db", runs), reference="RS")
    verdicts = report.pairwise.set_index(["strategy", "budget"])["verdict"]
    assert verdicts[("GPR", 3)] == "no successful evaluation (6 of 6 failed: build_error 6)"
    assert verdicts[("OK", 3)] == "reference RS: no successful evaluation"
    assert report.never_succeeded_text() == (
        "no successful evaluation in any run of toy (RS, GPR; failed: build_error 12)"
    )
    assert "No successful evaluation in any run of RS (6 of 6 failed: build_error 6)" in (
        markdown(report)
    )
    shown = _text(summary_table(report))
    assert "reference; no successful evaluation (6 of 6 failed" in shown
    assert "too few repetitions" not in shown


def test_a_budget_below_the_checkpoint_is_the_verdicts_reason(tmp_path):
    """RS ran 5 times to budget 2 only: at 4 the reason is its budget, not too few runs."""
    runs = {"RS": [[3.0, 2.0]] * 5, "Sobol": [[4.0, 3.0, 2.0, 1.0]] * 5}
    db = _journal(tmp_path / "j.db", runs)
    report = analyse(db, checkpoints=[2, 4], reference="RS")
    verdicts = report.pairwise.set_index(["strategy", "budget"])["verdict"]
    assert verdicts[("Sobol", 4)] == "reference RS's budget 2 < 4"
    report = analyse(db, checkpoints=[2, 4], reference="Sobol")
    verdicts = report.pairwise.set_index(["strategy", "budget"])["verdict"]
    assert verdicts[("RS", 4)] == "RS's budget 2 < 4"
    assert "too few repetitions" not in markdown(report)


def test_a_strategy_that_succeeded_once_is_not_listed(tmp_path):
    report = analyse(_journal(tmp_path / "j.db", {"A": [[None, 2.0], [None, None]]}))
    assert report.never_succeeded() == {} and report.never_succeeded_text() is None


def test_intervals_of_fewer_than_five_repetitions_are_marked(tmp_path):
    few = {"A": [[float(s), 1.0] for s in range(2)], "B": [[float(s)] * 2 for s in range(2)]}
    report = analyse(_journal(tmp_path / "few.db", few))
    text = markdown(report)
    assert f"[0.000, 1.000]{FEW_MARK}" in text and FEW_NOTE in text
    assert FEW_NOTE in _text(summary_table(report))
    assert report.summary["ci_low"].notna().all()  # the CSV keeps the numbers
    many = {"A": [[float(s), 1.0] for s in range(5)], "B": [[float(s)] * 2 for s in range(5)]}
    report = analyse(_journal(tmp_path / "many.db", many))
    assert FEW_MARK not in markdown(report) and FEW_NOTE not in _text(summary_table(report))
