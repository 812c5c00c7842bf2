from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rich.table import Table

from gpautotune.analysis import (
    analyse,
    expected_random_best,
    load_runs,
    report_dir,
    summary_table,
    write_report,
)
from gpautotune.config import Section, build_problem
from gpautotune.exceptions import ConfigError
from gpautotune.problems import Measurement, Status
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.tuner import TuningRun, tune

NAN = np.nan
# label -> strategy, [(seed, values)]; None is a failed evaluation
RUNS = {
    "A": ("random", [(0, [None, 5, 3, 4]), (1, [2, 6, 1, 7]), (2, [4, 4, 4, 0.5])]),
    "B": ("sobol", [(0, [1, 2, 3, 4]), (1, [3, 2, 1, 1.5])]),
}


@pytest.fixture
def journal(tmp_path):
    """A journal of hand-made runs on a 10-point space, plus one unfinished run."""
    db = tmp_path / "j.db"
    space = Space([IntRange("x", 0, 9)], name="toy")
    for label, (strategy, runs) in RUNS.items():
        for seed, values in runs:
            run = TuningRun(space, strategy, storage=db, seed=seed, budget=4, label=label)
            for x, v in enumerate(values):
                run.tell({"x": x}, Measurement.failure(Status.RUN_ERROR) if v is None else v)
            run.finish()
    TuningRun(space, "random", storage=db, seed=9, budget=4, label="A").tell(
        {"x": 0}, 0.1
    )  # unfinished
    with Journal(db) as journal:
        journal.record_problem("toy", {}, {"name": "booth"}, 0.5)
    return db


def test_runs_are_taken_in_seed_order_whatever_order_they_ended_in(tmp_path):
    space = Space([IntRange("x", 0, 9)], name="toy")
    frames = []
    for name, seeds in (("in-order", [0, 1, 2, 3]), ("shuffled", [2, 0, 3, 1])):
        db = tmp_path / f"{name}.db"
        for seed in seeds:
            run = TuningRun(space, "random", storage=db, seed=seed, budget=2, label="A")
            run.tell({"x": 0}, float(seed) ** 2)
            run.tell({"x": 1}, 10.0)
            run.finish()
        a = load_runs(db).of("toy")[0]
        assert a.curves[:, 0].tolist() == [0.0, 1.0, 4.0, 9.0]
        frames.append(analyse(db).summary.filter(regex="^(n|mean|ci_low|ci_high)$"))
    pd.testing.assert_frame_equal(*frames)


def test_best_so_far_curves(journal):
    runs = load_runs(journal)
    assert runs.unfinished == 1 and runs.labels() == ["A", "B"]
    a = runs.of("toy")[0]
    np.testing.assert_array_equal(a.curves, [[NAN, 5, 3, 3], [2, 2, 1, 1], [4, 4, 4, 0.5]])
    assert (
        a.at(1).tolist() == [2, 4]
        and a.used.tolist() == [4, 4, 4]
        and a.best_at.tolist() == [3, 3, 4]
    )
    assert runs.problems["toy"].optimum == 0.5


def test_summary_pairwise_and_score(journal):
    report = analyse(journal, checkpoints=[2, 4])
    s = report.summary.set_index(["strategy", "budget"])
    a4 = s.loc[("A", 4)]
    assert (a4["n"], a4["mean"], a4["median"], a4["min"], a4["max"]) == (3, 1.5, 1.0, 0.5, 3.0)
    assert a4["slowdown_mean"] == pytest.approx(3.0) and a4["slowdown_max"] == pytest.approx(6.0)
    assert a4["at_optimum"] == pytest.approx(1 / 3)  # seed 2 reached the optimum 0.5
    assert s.loc[("B", 4)]["at_optimum"] == 0
    assert (
        a4["best_at_mean"] == pytest.approx(10 / 3) and a4["used_mean"] == 4 and a4["used_max"] == 4
    )
    assert s.loc[("A", 2)]["mean"] == pytest.approx(11 / 3)
    assert s.loc[("B", 2)]["best_at_mean"] == pytest.approx(1.5)
    assert report.reference == {"toy": "A"}  # the random strategy
    p = report.pairwise
    assert p["strategy"].tolist() == ["B", "B"] and set(p["metric"]) == {"slowdown"}
    # paired over the seeds both ran (0 and 1): B's slowdowns 2, 2 against A's 6, 2
    at4 = p.loc[p["budget"] == 4].iloc[0]
    assert at4["test"] == "wilcoxon" and at4["n"] == 2
    assert at4["diff"] == pytest.approx(((1 - 3) + (1 - 1)) / 2 / 0.5)
    assert at4["p_holm"] == at4["p_value"]  # one strategy against the reference
    # no table to rebuild: the baseline is A's mean curve, so A's score (0 by
    # construction) is left out, and said so
    assert report.baselines["toy"].source.startswith("estimated")
    assert report.baselines["toy"].estimated_from == "A"
    curves = report.curves.set_index("strategy")
    assert curves.loc["A", "score"].isna().all() and curves.loc["B", "score"].notna().any()


def test_written_files_and_terminal_table(journal, tmp_path):
    paths = write_report(journal, tmp_path / "out", checkpoints=[2, 4], reference="B")
    names = {p.name for p in paths}
    assert names == {
        "summary.csv",
        "pairwise.csv",
        "curves.csv",
        "report.md",
        "toy-histogram.png",
        "toy-best-so-far.png",
        "toy-score.png",
    }
    for p in paths:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(pd.read_csv(tmp_path / "out" / "summary.csv")) == 4
    assert pd.read_csv(tmp_path / "out" / "pairwise.csv")["reference"].unique().tolist() == ["B"]
    text = (tmp_path / "out" / "report.md").read_text()
    assert "## toy" in text and "Against B" in text and "![toy-score.png](toy-score.png)" in text
    shown = summary_table(analyse(journal)).renderables
    tables = [r for r in shown if isinstance(r, Table)]
    assert len(tables) == 1 and tables[0].row_count == 2
    assert "1 unfinished run(s) left out" in " ".join(str(r) for r in shown)


def test_replay_problems_get_the_exact_random_baseline(tmp_path):
    data = tmp_path / "table.csv"
    values = np.array([7.0, 3.0, 9.0, 1.0, 4.0, 4.0, 8.0, 2.0, 6.0, 5.0])
    pd.DataFrame({"x": np.arange(10), "t": values}).to_csv(data, index=False)
    section = {
        "name": "replay",
        "data": str(data),
        "objective": "t",
        "parameters": [{"name": "x", "kind": "int", "low": 0, "high": 9}],
    }
    problem = build_problem(Section(**section))
    db = tmp_path / "r.db"
    for seed in range(3):
        tune(problem, "random", 6, storage=db, seed=seed, label="RS")
    with Journal(db) as journal:
        journal.record_problem(problem.name, problem.describe(), section, problem.optimum)
    report = analyse(db)
    assert report.baselines["replay"].source.startswith("exact")
    random = report.curves["random"].to_numpy()
    assert np.allclose(random, expected_random_best(values, np.arange(1, 7)))
    assert report.summary["slowdown_mean"].notna().all()  # optimum 1.0 is known


def test_a_comparisons_stored_settings_are_the_reports_defaults(journal, tmp_path):
    assert report_dir(journal) == journal.with_name("j-report")  # what compare writes
    with Journal(journal) as j:
        j.record_report_settings(
            {
                "labels": ["B", "A"],
                "checkpoints": [3],
                "reference": "B",
                "output": str(tmp_path / "rep"),
            }
        )
    report = analyse(journal)
    assert [g.label for g in report.runs.groups] == ["B", "A"]  # the file's strategy order
    assert report.checkpoints == {"toy": [3]} and report.reference == {"toy": "B"}
    assert report_dir(journal) == tmp_path / "rep"
    assert analyse(journal, checkpoints=[2], reference="A").checkpoints == {"toy": [2]}
    with pytest.raises(ConfigError, match=r"reference 'a' is none of .*\['B', 'A'\]"):
        analyse(journal, reference="a")


def test_a_label_pooling_different_settings_is_warned_about(tmp_path, caplog):
    space = Space([IntRange("x", 0, 9)])

    def objective(config):
        return float((config["x"] - 3) ** 2)

    db, other = tmp_path / "mixed.db", tmp_path / "other.db"
    tune(objective, "random", 4, space=space, storage=db, seed=0, label="S")
    tune(objective, "random", 4, space=space, storage=db, seed=1, label="R")
    tune(objective, "sobol", 4, space=space, storage=other, seed=1, label="S")
    with Journal(db) as mixed, Journal(other) as source:
        mixed.copy_runs(source)  # journals merged: the tuner refuses this in one journal
    with caplog.at_level("WARNING", logger="gpautotune.analysis._runs"):
        runs = load_runs(db)
    warned = [r.getMessage() for r in caplog.records if "strategy settings" in r.getMessage()]
    assert len(warned) == 1 and "'S'" in warned[0]
    assert sorted(len(g.seeds) for g in runs.groups) == [1, 2]


def test_a_checkpoint_one_problem_reaches_is_kept_for_it_alone(tmp_path):
    db = tmp_path / "two.db"
    for name, budget in (("short", 4), ("long", 8)):
        space = Space([IntRange("x", 0, 9)], name=name)
        run = TuningRun(space, "random", storage=db, seed=0, budget=budget)
        for x in range(budget):
            run.tell({"x": x}, float(10 - x))
        run.finish()
    assert analyse(db, checkpoints=[2, 8]).checkpoints == {"short": [2], "long": [2, 8]}
    with pytest.raises(ConfigError, match="checkpoint 9 is outside 1..8"):
        analyse(db, checkpoints=[9])
