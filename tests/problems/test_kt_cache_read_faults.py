"""Faults found in how Kernel Tuner caches and T4 files are read (direction, records left
out, name mapping, level types and order)."""

from __future__ import annotations

import json
import warnings

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status, make_problem
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import Categorical


def _write(tmp_path, tune_params, records, objective="time", name="c.json", keys=None):
    """A cache of ``records`` (dicts of parameter values and recorded fields)."""
    document = {
        "tune_params_keys": list(tune_params) if keys is None else keys,
        "tune_params": tune_params,
        "objective": objective,
        "cache": {",".join(str(v) for v in r.values()): r for r in records},
    }
    (tmp_path / name).write_text(json.dumps(document))
    return tmp_path / name


def _throughput(tmp_path, objective="GFLOP/s"):
    records = [
        {"bx": b, "by": y, objective: b * y, "time": 1 / (b * y)} for b in (32, 64) for y in (1, 2)
    ]
    return _write(tmp_path, {"bx": [32, 64], "by": [1, 2]}, records, objective=objective)


def _t4(tmp_path, objective, configurations):
    results = [
        {
            "configuration": c,
            "invalidity": "correct",
            "measurements": [{"name": objective, "value": float(k + 1), "unit": ""}],
            "objectives": [objective],
        }
        for k, c in enumerate(configurations)
    ]
    path = tmp_path / "t4.json"
    path.write_text(json.dumps({"schema_version": "1.0.0", "results": results}))
    return path


# ------------------------------------------------------------------ fault 1: direction
@pytest.mark.parametrize("objective", ["GFLOP/s", "TFLOP/s", "GB/s", "GFLOPS/W", "fitness"])
def test_a_higher_is_better_objective_is_maximised_by_default(tmp_path, objective):
    problem = kt_cache_problem(_throughput(tmp_path, objective))
    assert problem.direction == "max" and problem.describe()["direction"] == "max"
    assert problem.best_known() == {"bx": 64, "by": 2}
    assert problem.optimum == pytest.approx(1 / 128)


def test_time_stays_minimised_and_an_explicit_direction_wins(tmp_path):
    path = _throughput(tmp_path)
    assert kt_cache_problem(path, objective="time").direction == "min"
    explicit = kt_cache_problem(path, direction="min")
    assert explicit.direction == "min" and explicit.best_known() == {"bx": 32, "by": 1}
    yaml = make_problem("kt-cache", path=str(path), objective="time", direction="max")
    assert yaml.best_known() == {"bx": 32, "by": 1}  # 1 / time is largest there


def test_an_objective_of_unknown_direction_needs_one(tmp_path):
    path = _throughput(tmp_path, "score")
    with pytest.raises(ConfigError, match=r"give `direction: min` or `direction: max`") as info:
        make_problem("kt-cache", path=str(path))
    assert "'score'" in str(info.value) and "\n" not in str(info.value)
    assert kt_cache_problem(path, direction="max").best_known() == {"bx": 64, "by": 2}


def test_a_t4_file_of_a_throughput_objective_is_maximised(tmp_path):
    path = _t4(tmp_path, "GB/s", [{"bx": b} for b in (32, 64, 128)])
    problem = kt_cache_problem(path)
    assert problem.direction == "max" and problem.best_known() == {"bx": 128}


# ------------------------------------------------------------------ fault 4: left out
def test_records_left_out_are_warned_about_with_counts_per_reason(tmp_path):
    records = [{"bx": b, "by": y, "time": b + y} for b in (32, 64) for y in (1, 2)]
    records += [
        {"bx": 128, "by": 1, "time": 0.5},  # not a level
        {"bx": 32, "time": 0.5},  # lacks by
        {"bx": 32, "by": 2.0, "time": 0.1},  # repeats 32,2
    ]
    path = _write(tmp_path, {"bx": [32, 64], "by": [1, 2]}, records)
    with pytest.warns(UserWarning) as caught:
        problem = kt_cache_problem(path)
    (message,) = [str(w.message) for w in caught]
    assert "3 of 7 records" in message and str(path) in message and "\n" not in message
    assert "not levels of tune_params: 1" in message and "repeats" in message
    assert "lacks parameter(s) ['by']: 1" in message
    assert problem.rows == 4


def test_a_tune_params_key_missing_from_tune_params_keys_is_refused(tmp_path):
    records = [
        {"a": a, "b": b, "c": c, "time": a + b + c} for a in (1, 2) for b in (1, 2) for c in (1, 2)
    ]
    path = _write(tmp_path, {"a": [1, 2], "b": [1, 2], "c": [1, 2]}, records, keys=["b", "a"])
    with pytest.raises(ConfigError, match=r"\['c'\]") as info:
        kt_cache_problem(path)
    assert str(path) in str(info.value) and "tune_params_keys" in str(info.value)


# ------------------------------------------------------------------ fault 5: names
def test_a_key_that_is_an_identifier_keeps_its_name(tmp_path):
    keys = ["tile-size", "tile_size", "class", "1st"]
    records = [
        dict(zip(keys, (a, b, c, d), strict=True), time=a + 10 * b + c + d)
        for a in (1, 2, 4)
        for b in (1, 2, 4)
        for c in (1, 2)
        for d in (1, 2)
    ]
    path = _write(tmp_path, {k: sorted({r[k] for r in records}) for k in keys}, records)
    with pytest.warns(UserWarning, match="12 of 36 rows"):
        problem = kt_cache_problem(path, restrictions=["tile_size >= 2"])
    names = problem.original_names
    assert names["tile_size"] == "tile_size" and names["class_"] == "class"
    assert len(set(names)) == 4 and sorted(names.values()) == sorted(keys)
    assert problem.rows == 24  # rows of the file's tile_size 2 and 4
    assert {c["tile_size"] for c in problem.violations[1]} == {1}


# ------------------------------------------------------------------ fault 11
def test_a_boolean_record_value_is_not_an_integer_level(tmp_path):
    records = [{"bx": b, "flag": f, "time": b + f} for b in (32, 64) for f in (0, 1)]
    records.append({"bx": 32, "flag": True, "time": 0.1})  # Kernel Tuner keys it "32,True"
    path = _write(tmp_path, {"bx": [32, 64], "flag": [0, 1]}, records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = kt_cache_problem(path)
    ((reason, (count, examples)),) = problem.records.skipped.items()
    assert "not levels" in reason and count == 1 and examples[0]["flag"] is True
    assert problem.optimum == 32


def test_t4_categorical_levels_keep_their_first_seen_order(tmp_path):
    layouts = ["row", "col", "tiled"]
    configs = [{"layout": s, "bx": b} for s in layouts for b in (64, 32)]
    problem = kt_cache_problem(_t4(tmp_path, "time", configs))
    assert problem.space["layout"] == Categorical("layout", ("row", "col", "tiled"))
    assert problem.space["bx"].levels == (32, 64)  # numbers stay sorted


def test_repeated_levels_name_the_file(tmp_path):
    records = [{"unroll": u, "time": k + 1.0} for k, u in enumerate((1, 2))]
    path = _write(tmp_path, {"unroll": [1, 1.0, 2]}, records)
    with pytest.raises(ConfigError, match="repeated levels") as info:
        kt_cache_problem(path)
    assert str(path) in str(info.value)


# ------------------------------------------------------- the objective's values (round 5)
def test_an_objective_holding_lists_is_refused_as_such(tmp_path):
    records = [{"bx": b, "time": b / 32, "times": [b / 32]} for b in (32, 64)]
    path = _write(tmp_path, {"bx": [32, 64]}, records)
    for direction in (None, "min"):
        with pytest.raises(ConfigError) as info:
            kt_cache_problem(path, objective="times", direction=direction)
        message = str(info.value)
        assert "'times' holds lists, not numbers; name a field with one number" in message
        assert "(e.g. time)" in message and "\n" not in message


def test_rows_lacking_the_objective_are_warned_about_once_with_the_count(tmp_path):
    records = [{"bx": 32, "times": [3.2]}, {"bx": 64, "time": None}]
    records += [{"bx": b, "time": b / 32} for b in (128, 256)]
    path = _write(tmp_path, {"bx": [32, 64, 128, 256]}, records)
    with pytest.warns(UserWarning) as caught:
        problem = kt_cache_problem(path)
    (message,) = [str(w.message) for w in caught]
    assert "2 of 4 rows" in message and "record no 'time'" in message and "run_error" in message
    assert problem.failures == {Status.RUN_ERROR: 2}


def test_times_of_zero_or_below_are_warned_about_once_with_the_count(tmp_path):
    records = [{"bx": b, "time": t} for b, t in ((32, -5.0), (64, 0.0), (128, 6.4))]
    path = _write(tmp_path, {"bx": [32, 64, 128]}, records)
    with pytest.warns(UserWarning) as caught:
        kt_cache_problem(path)
    (message,) = [str(w.message) for w in caught]
    assert "2 of 3 measured rows" in message and "zero or below (e.g. -5)" in message
    positive = [{"bx": 32, "time": 1.0}, records[2]]
    positive = _write(tmp_path, {"bx": [32, 128]}, positive, name="p.json")
    scores = [{"bx": b, "score": -b} for b in (32, 64)]  # not a time: below zero is no fault
    scores = _write(tmp_path, {"bx": [32, 64]}, scores, objective="score", name="s.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kt_cache_problem(positive)
        assert kt_cache_problem(scores, direction="min").optimum == -64
