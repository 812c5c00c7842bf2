"""Faults found by probing the journal and its exports: each test fails without its fix."""

import json
import sqlite3

import pandas as pd
import pytest

from gpautotune.exceptions import ConfigError, StorageError
from gpautotune.problems import Measurement
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import Categorical, IntRange, Space
from gpautotune.storage import Journal, RunSpec, export_t4, export_table, import_csv
from gpautotune.storage._records import dumps
from gpautotune.trial import Trial


def spec(**kw):
    base = dict(
        problem="p", problem_settings={}, strategy="s", strategy_settings={}, seed=1, space={}
    )
    return RunSpec(**{**base, **kw})


def journal_of(path, *runs):
    """A journal with one run per list of configurations (values 0, 1, ...)."""
    j = Journal(path)
    for k, configs in enumerate(runs):
        run = j.open_run(spec(seed=k), len(configs))
        j.add_trials(
            run.id, [Trial(i, c, Measurement.success(float(i))) for i, c in enumerate(configs)]
        )
    return j


def round_trip(tmp_path, space, configs):
    """The configurations and values ``import_csv`` reads from the run's CSV export."""
    j = journal_of(tmp_path / "j.db", configs)
    trials = import_csv(export_table(j, tmp_path / "t.csv"), space)
    return [t.config for t in trials], [t.value for t in trials]


def test_metrics_with_int_and_str_keys_are_stored_with_text_keys(tmp_path):
    j = Journal(tmp_path / "j.db")
    run = j.open_run(spec(), 1)
    m = Measurement.success(1.0, per_layer={0: 1.5, "total": 3.0, 10: 2.0, 2: None})
    j.add_trial(run.id, Trial(0, {"x": 1}, m))
    [back] = j.trials(run.id)
    assert back.measurement.metrics["per_layer"] == {"0": 1.5, "10": 2.0, "2": None, "total": 3.0}
    assert list(back.measurement.metrics["per_layer"]) == ["0", "10", "2", "total"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({0: "a", "0": "b"}, '{"0": "b", "0 (int)": "a"}'),  # nothing is lost to a clash
        ({(1, 2): 1, "a": [{None: 1, True: 2}]}, '{"(1, 2)": 1, "a": [{"null": 1, "true": 2}]}'),
        ({"b": 1, "a": 2}, '{"a": 2, "b": 1}'),  # keys JSON can sort are as before
    ],
)
def test_dumps_stores_keys_json_cannot_sort_or_hold(value, text):
    assert dumps(value) == text


def test_parameters_named_like_fixed_columns_survive_export_and_import(tmp_path):
    space = Space([IntRange("seed", 1, 4), IntRange("value", 5, 8), IntRange("info", 0, 1)])
    configs = [{"seed": 3, "value": 5, "info": 1}, {"seed": 4, "value": 8, "info": 0}]
    assert round_trip(tmp_path, space, configs) == (configs, [0.0, 1.0])
    frame = pd.read_csv(tmp_path / "t.csv")
    assert frame["param.seed"].tolist() == [3, 4] and frame["seed"].tolist() == [0, 0]
    assert frame["param.info"].tolist() == [1, 0] and frame["info"].tolist() == ["{}", "{}"]


def test_text_levels_that_look_like_numbers_or_na_come_back_exactly(tmp_path):
    space = Space(
        [
            Categorical("unroll", ["1", "2", "4"]),
            Categorical("pad", ["01", "1"]),
            Categorical("fill", ["None", "NA", "x"]),
            Categorical("mixed", [0, "0.0", "auto"]),
        ]
    )
    configs = [
        {"unroll": "4", "pad": "01", "fill": "None", "mixed": 0},
        {"unroll": "1", "pad": "1", "fill": "NA", "mixed": "0.0"},
        {"unroll": "2", "pad": "01", "fill": "x", "mixed": "auto"},
    ]
    back, _ = round_trip(tmp_path, space, configs)
    assert back == configs
    assert [[type(v) for v in c.values()] for c in back] == [
        [type(v) for v in c.values()] for c in configs
    ]


def test_numbers_written_as_floats_are_read_back_as_levels_and_empty_cells_refused(tmp_path):
    # a parameter that only one of two runs has is a float column in the export
    j = journal_of(tmp_path / "j.db", [{"x": 2}], [{"y": 1}])
    export_table(j, tmp_path / "t.csv")
    assert pd.read_csv(tmp_path / "t.csv", dtype=str)["x"].tolist()[0] == "2.0"
    with pytest.raises(ConfigError, match="row 3: nan is not a level of parameter 'x'"):
        import_csv(tmp_path / "t.csv", Space([IntRange("x", 1, 3)]))
    (tmp_path / "one.csv").write_text("x,value\n2.0,1.5\n")
    [trial] = import_csv(tmp_path / "one.csv", Space([IntRange("x", 1, 3)]))
    assert trial.config == {"x": 2} and type(trial.config["x"]) is int


def test_parquet_writes_columns_of_mixed_types_as_text(tmp_path):
    j = journal_of(
        tmp_path / "j.db",
        [{"mode": "fast", "c": 0}, {"mode": "safe", "c": "auto"}],
        [{"mode": 2, "c": 0}],
    )
    frame = pd.read_parquet(export_table(j, tmp_path / "t.parquet"))
    assert frame["mode"].tolist() == ["fast", "safe", "2"]
    assert frame["c"].tolist() == ["0", "auto", "0"]


def test_export_suffixes_are_matched_in_any_case(tmp_path):
    j = journal_of(tmp_path / "j.db", [{"x": 1}])
    assert pd.read_csv(export_table(j, tmp_path / "t.CSV"))["x"].tolist() == [1]
    assert pd.read_parquet(export_table(j, tmp_path / "t.Parquet"))["x"].tolist() == [1]


def test_t4_export_of_an_empty_journal_says_there_is_no_run(tmp_path):
    with pytest.raises(ConfigError, match="holds no run to export"):
        export_t4(Journal(tmp_path / "j.db"), tmp_path / "t.json")


def test_report_settings_on_a_read_only_journal_give_a_storage_error(tmp_path):
    Journal(tmp_path / "j.db").close()
    with pytest.raises(StorageError, match="cannot record report settings.*read-only"):
        Journal(tmp_path / "j.db", read_only=True).record_report_settings({"a": 1})


def test_a_database_of_another_application_is_refused_and_left_alone(tmp_path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StorageError, match="holds other tables: not a gpautotune journal"):
        Journal(other)
    tables = sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("t",)]
    old = tmp_path / "old.db"  # a journal of an older schema is still opened and completed
    Journal(old).close()
    sqlite3.connect(old).execute("DROP TABLE report_settings").connection.commit()
    with Journal(old) as j:
        j.record_report_settings({"a": 1})
        assert j.report_settings() == {"a": 1}


def test_levels_mixing_ints_and_floats_keep_their_types_through_a_t4_round_trip(tmp_path):
    # Kernel Tuner #defines the level 1 as "1"; gpautotune gave 1.0, and exports wrote 1.0
    tune_params = {"bx": [32, 64], "unroll": [1, 2, 2.5, 4]}
    cache = {
        f"{bx},{u}": {"bx": bx, "unroll": u, "time": bx / 32 + u, "times": [bx / 32 + u]}
        for bx in tune_params["bx"]
        for u in tune_params["unroll"]
    }
    document = {"tune_params_keys": ["bx", "unroll"], "tune_params": tune_params, "cache": cache}
    (tmp_path / "mixed.json").write_text(json.dumps({**document, "objective": "time"}))
    problem = kt_cache_problem(tmp_path / "mixed.json")
    best = problem.best_known()
    assert best == {"bx": 32, "unroll": 1} and type(best["unroll"]) is int
    configs = problem.space.enumerate()
    assert [type(c["unroll"]) for c in configs[:4]] == [int, int, float, int]
    j = Journal(tmp_path / "j.db")
    run = j.open_run(spec(problem="kt-cache", problem_settings=problem.describe()), len(configs))
    j.add_trials(run.id, [Trial(i, c, problem.evaluate(c)) for i, c in enumerate(configs)])
    written = json.loads(export_t4(j, tmp_path / "t4.json").read_text())
    assert [r["configuration"]["unroll"] for r in written["results"]][:4] == [1, 2, 2.5, 4]
    assert "1.0" not in json.dumps([r["configuration"] for r in written["results"]])
    back = kt_cache_problem(tmp_path / "t4.json")
    assert [(v, type(v)) for v in back.space["unroll"].levels] == [
        (1, int),
        (2, int),
        (2.5, float),
        (4, int),
    ]


def test_a_none_level_written_as_an_empty_cell_reads_back_as_none(tmp_path):
    space = Space([Categorical("mode", [None, "a"]), IntRange("x", 1, 2)])
    configs = [{"mode": None, "x": 1}, {"mode": "a", "x": 2}, {"mode": None, "x": 2}]
    back, values = round_trip(tmp_path, space, configs)
    assert back == configs and values == [0.0, 1.0, 2.0]
    assert pd.read_csv(tmp_path / "t.csv", dtype=str, keep_default_na=False)["mode"].tolist() == [
        "",
        "a",
        "",
    ]
    # only a parameter with a None level reads an empty cell so
    (tmp_path / "e.csv").write_text("mode,value\n,1.5\n")
    with pytest.raises(ConfigError, match="row 2: nan is not a level of parameter 'mode'"):
        import_csv(tmp_path / "e.csv", Space([Categorical("mode", ["a", "b"])]))


@pytest.mark.parametrize("name", ["j.db", "link.db", "j.db-wal", "j.db-shm", "j.db-journal"])
@pytest.mark.parametrize("write", ["csv", "parquet", "t4"])
def test_an_export_onto_the_journal_it_reads_is_refused_before_anything_is_written(
    tmp_path, name, write
):
    journal_of(tmp_path / "j.db", [{"a": 1}]).close()
    (tmp_path / "link.db").symlink_to("j.db")
    before = (tmp_path / "j.db").read_bytes()
    with Journal(tmp_path / "j.db", read_only=True) as j:
        with pytest.raises(ConfigError, match="is .*the journal it reads.*give another path"):
            if write == "t4":
                export_t4(j, tmp_path / name)
            else:
                export_table(j, tmp_path / name, format=write)
    assert (tmp_path / "j.db").read_bytes() == before
    assert not any((tmp_path / f"j.db{side}").exists() for side in ("-wal", "-shm", "-journal"))
    with Journal(tmp_path / "link.db", read_only=True) as j:  # a journal read through a link
        with pytest.raises(ConfigError, match="the journal it reads"):
            export_table(j, tmp_path / "j.db", format="csv")


def test_a_reader_refuses_an_empty_file_saying_it_is_empty(tmp_path):
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(StorageError, match=r"it is an empty file \(0 bytes\); remove it"):
        Journal(tmp_path / "empty.db", read_only=True)
    assert (tmp_path / "empty.db").read_bytes() == b""
    with Journal(tmp_path / "empty.db") as j:  # a writer makes a journal of it, as SQLite does
        assert j.runs() == []
