import sqlite3

import pandas as pd
import pytest

from gpautotune.exceptions import ConfigError, StorageError
from gpautotune.problems import Measurement, Status
from gpautotune.problems.synthetic import BoothProblem
from gpautotune.storage import Journal, RunSpec, export_table, import_csv, trials_frame
from gpautotune.trial import Origin, Trial


def spec(**kw):
    base = dict(
        problem="p", problem_settings={"a": 1}, strategy="s", strategy_settings={}, seed=1, space={}
    )
    return RunSpec(**{**base, **kw})


def test_runs_are_found_by_key_and_budget_updated(tmp_path):
    j = Journal(tmp_path / "j.db")
    r1 = j.open_run(spec(), budget=10)
    assert j.open_run(spec(), budget=20).id == r1.id
    assert j.get_run(r1.id).budget == 20
    assert j.open_run(spec(seed=2), budget=10).id != r1.id
    run = j.get_run(r1.id)
    assert run.settings["versions"]["numpy"] and run.settings["host"]


def test_trials_round_trip_and_are_unique_per_number(tmp_path):
    j = Journal(tmp_path / "j.db")
    run = j.open_run(spec(), 5)
    t0 = Trial(
        0,
        {"x": 1, "flag": True},
        Measurement.success(1.5, samples=[1.5, 1.7], device="cpu"),
        {"ei": 0.1},
        1.0,
        0.2,
    )
    t1 = Trial(
        1, {"x": 2, "flag": False}, Measurement.failure(Status.BUILD_ERROR, "log"), {}, 2.0, 0.1
    )
    j.add_trials(run.id, [t0, t1])
    assert j.trials(run.id) == [t0, t1]
    with pytest.raises(StorageError):
        j.add_trial(run.id, t1)
    # a second connection (another process) sees committed trials
    assert len(Journal(tmp_path / "j.db").trials(run.id)) == 2


def test_read_methods_give_runs_trials_and_the_catalog(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        run = j.open_run(spec(label="L"), 3)
        j.add_trials(
            run.id,
            [
                Trial(0, {"x": 1}, Measurement.success(2.0), origin=Origin.WARM_START),
                Trial(1, {"x": 2}, Measurement.success(1.0)),
                Trial(2, {"x": 3}, Measurement.failure(Status.RUN_ERROR, "crash")),
            ],
        )
        j.record_problem("p", {"a": 1}, {"name": "booth"}, 0.5)
        j.record_problem("p", {"a": 1}, {"name": "booth", "levels": 3}, 0.25)  # updated
    with Journal(tmp_path / "j.db", read_only=True) as j:
        runs = j.run_table()
        assert runs[["id", "problem", "label", "budget"]].values.tolist() == [[run.id, "p", "L", 3]]
        assert runs["problem_settings"].tolist() == ['{"a": 1}']  # as stored, the catalog's key
        tuner = j.trial_values()
        assert tuner[["number", "status"]].values.tolist() == [[1, "ok"], [2, "run_error"]]
        assert len(j.trial_values(origin=None)) == 3
        entry = j.problem_catalog()["p", '{"a": 1}']
        assert entry.section == {"name": "booth", "levels": 3} and entry.optimum == 0.25


def test_read_only_journals_are_checked_and_left_alone(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        Journal(tmp_path / "missing.db", read_only=True)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StorageError, match="not a gpautotune journal"):
        Journal(other, read_only=True)
    tables = sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("t",)]  # no journal tables were created in someone else's database
    old = tmp_path / "old.db"  # a journal written before the problem catalog existed
    Journal(old).close()
    sqlite3.connect(old).execute("DROP TABLE problem_catalog").connection.commit()
    with Journal(old, read_only=True) as j:
        assert j.problem_catalog() == {}


def test_export_csv_parquet_and_frame(tmp_path):
    j = Journal(tmp_path / "j.db")
    run = j.open_run(spec(), 5)
    j.add_trial(run.id, Trial(0, {"x1": 1, "x2": 3}, Measurement.success(0.0)))
    frame = trials_frame(j)
    assert frame.loc[0, "x1"] == 1 and frame.loc[0, "status"] == "ok"
    assert pd.read_csv(export_table(j, tmp_path / "t.csv")).shape[0] == 1
    assert pd.read_parquet(export_table(j, tmp_path / "t.parquet")).shape[0] == 1
    with pytest.raises(ConfigError):
        export_table(j, tmp_path / "t.xlsx")


def test_import_csv_as_warm_start(tmp_path):
    space = BoothProblem().space
    path = tmp_path / "w.csv"
    pd.DataFrame({"x1": [1, 2, 0], "x2": [3, 2, 0], "value": [0.0, 2.0, None]}).to_csv(
        path, index=False
    )
    trials = import_csv(path, space)
    assert [t.origin for t in trials] == [Origin.WARM_START] * 3
    assert [t.status for t in trials] == [Status.OK, Status.OK, Status.RUN_ERROR]
    pd.DataFrame({"x1": [99], "x2": [1], "value": [1.0]}).to_csv(path, index=False)
    with pytest.raises(ConfigError, match="row 2"):
        import_csv(path, space)


def test_a_run_made_from_the_same_data_elsewhere_is_found_again(tmp_path):
    j = Journal(tmp_path / "j.db")

    def at(place, digest="d1", a=1):
        return spec(problem_settings={"a": a, "source": place}, data_digest=digest)

    run = j.open_run(at("/here/t.csv"), budget=10)
    j.finish_run(run.id)
    assert j.open_run(at("/there/t.csv"), budget=10).id == run.id
    assert (at("/there/t.csv").placeless_key, 10) in j.finished()
    assert j.find(at("/there/t.csv", digest="d2")) is None  # other data
    assert j.find(at("/there/t.csv", a=2)) is None  # other settings
    assert j.find(spec(problem_settings={"a": 1, "source": "/there/t.csv"})) is None  # no digest
    j.set_aside_run(run.id)
    assert j.find(at("/there/t.csv")) is None and j.find(at("/here/t.csv")) is None


def _finished_run(j, trials, **kw):
    run = j.open_run(spec(**kw), budget=len(trials))
    j.add_trials(run.id, trials)
    j.finish_run(run.id)
    return run


def _trial(number, value):
    return Trial(number, {"x": number}, Measurement.success(value), {"ei": 0.5}, 1.0, 0.1)


def test_a_run_extended_elsewhere_gets_its_further_trials(tmp_path):
    """A run merged at budget 2, then extended to 4 on another machine: merging again
    copies trials 2 and 3 and the budget; a source whose first trials differ is skipped."""
    a, b, other = (Journal(tmp_path / f"{n}.db") for n in ("a", "b", "o"))
    _finished_run(b, [_trial(0, 3.0), _trial(1, 2.0)])
    longer = [_trial(n, 4.0 - n) for n in range(4)]
    run = _finished_run(a, longer)
    assert b.copy_runs(a) == (1, 0)
    (held,) = b.runs()
    assert held.budget == 4 and [t.value for t in b.trials(held.id)] == [3.0, 2.0, 2.0, 1.0]
    assert b.copy_runs(a) == (0, 1)
    _finished_run(other, [_trial(5, 1.0), *longer[1:]])
    assert b.copy_runs(other) == (0, 1) and len(b.trials(held.id)) == 4
    assert run.key == held.key


def test_runs_of_other_journals_are_copied_once_with_their_trials(tmp_path):
    """``copy_runs`` (``gpautotune merge``) joins journals made on several machines: each
    finished run once, trials and data digest included, only the runs ``keep`` accepts."""
    a, b = Journal(tmp_path / "a.db"), Journal(tmp_path / "b.db")
    kept = _finished_run(a, [_trial(0, 3.0), _trial(1, 2.0)], label="GPR", problem="gemm/X")
    _finished_run(a, [_trial(0, 1.0)], label="RS", problem="gemm/X")
    _finished_run(a, [_trial(0, 1.0)], label="GPR", problem="pnpoly/Y")
    a.open_run(spec(label="GPR", problem="gemm/X", seed=9), budget=3)  # unfinished
    replayed = dict(problem_settings={"path": "/here/t.json"}, data_digest="d1", label="GPR")
    _finished_run(a, [_trial(0, 5.0)], problem="gemm/Z", **replayed)
    # b holds the gemm/Z run already, made from the same data read from another folder
    _finished_run(
        b,
        [_trial(0, 5.0)],
        problem="gemm/Z",
        **{**replayed, "problem_settings": {"path": "/there/t.json"}},
    )

    def gpr_gemm(run):
        return run.label == "GPR" and run.problem.startswith("gemm/")

    assert b.copy_runs(a, gpr_gemm) == (1, 1)
    (copied,) = [r for r in b.runs() if r.key == kept.key]
    assert copied.status == "finished" and copied.label == "GPR"
    assert [(t.number, t.config, t.value, t.info) for t in b.trials(copied.id)] == [
        (t.number, t.config, t.value, t.info) for t in a.trials(kept.id)
    ]
    assert b.copy_runs(a, gpr_gemm) == (0, 2)  # nothing twice
    assert b.copy_runs(a) == (2, 2)  # RS and pnpoly; never the unfinished run
    assert len(b.runs()) == 4
    with pytest.raises(StorageError, match="read-only"):
        Journal(tmp_path / "a.db", read_only=True).copy_runs(b)
