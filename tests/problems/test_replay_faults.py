"""Faults found by replaying users' own tables (CSV ``replay``, Kernel Tuner caches, T4)."""

from __future__ import annotations

import json
import warnings

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems import Status, make_problem
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import Categorical

PARAMETERS = [
    {"name": "x", "kind": "int", "low": 1, "high": 4},
    {"name": "y", "kind": "categorical", "choices": ["a", "b"]},
]
GRID = [(x, y) for y in "ab" for x in (1, 2, 3, 4)]


def _replay(tmp_path, text: str, parameters=PARAMETERS):
    path = tmp_path / "t.csv"
    path.write_text(text)
    return make_problem("replay", data=str(path), objective="time", parameters=parameters)


def _csv(rows) -> str:
    return "x,y,time\n" + "".join(f"{x},{y},{t}\n" for x, y, t in rows)


def test_duplicate_configurations_keep_the_first_row_and_say_so(tmp_path):
    rows = [(x, y, 10.0 - k) for k, (x, y) in enumerate(GRID)]  # 3,b is 4.0 (line 8)
    rows += [(3, "b", 0.5), (1, "a", 0.1)]  # lines 10 and 11 repeat 3,b and 1,a
    with pytest.warns(UserWarning, match=r"2 rows .* \{'x': 3, 'y': 'b'\} in lines 8, 10"):
        problem = _replay(tmp_path, _csv(rows))
    assert problem.duplicate_rows == 2 and problem.table_size == 8
    assert problem.evaluate({"x": 3, "y": "b"}).value == 4.0
    assert problem.evaluate({"x": 1, "y": "a"}).value == 10.0
    assert problem.optimum == 3.0 and problem.best_known() == {"x": 4, "y": "b"}
    assert problem.evaluate(problem.best_known()).value == problem.optimum
    assert sorted(problem.measured_values()) == sorted(10.0 - k for k in range(8))


def test_text_cells_match_levels_of_another_type(tmp_path):
    parameters = [PARAMETERS[0], {"name": "y", "kind": "categorical", "choices": [1, "auto"]}]
    rows = [
        (x, y, 10.0 * x + (y == 1)) for x, y in [(x, y) for y in (1, "auto") for x in (1, 2, 3, 4)]
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problem = _replay(tmp_path, _csv(rows), parameters)
    assert problem.dropped_rows == 0 and problem.table_size == 8
    assert problem.evaluate({"x": 3, "y": 1}).value == 31.0
    assert problem.optimum == 10.0 and problem.best_known() == {"x": 1, "y": "auto"}


def test_dropped_rows_are_warned_about_with_the_first_one(tmp_path):
    rows = [(x, y, 5.0) for x, y in GRID] + [(7, "a", 0.1), (2, "c", 0.2), ("", "a", 0.3)]
    with pytest.warns(
        UserWarning, match=r"3 of 11 rows .*column 'x', line 10: 7(\.0)? is not a level"
    ):
        problem = _replay(tmp_path, _csv(rows))
    assert problem.dropped_rows == 3 and problem.optimum == 5.0
    assert problem.first_dropped.startswith("column 'x', line 10")


def test_no_matching_row_names_the_column_value_and_line(tmp_path):
    rows = [("one", "a", 1.0), ("four", "b", 2.0)]
    with warnings.catch_warnings(), pytest.raises(ConfigError) as info:
        warnings.simplefilter("ignore")
        _replay(tmp_path, _csv(rows))
    assert "column 'x', line 2: 'one' is not a level of parameter 'x'" in str(info.value)


def _cache(tmp_path, tile_levels, name="c.json"):
    records = {}
    for b in (32, 64):
        for k, t in enumerate(tile_levels):
            records[f"{b},{t}"] = {"block_size_x": b, "tile": t, "time": b / 32 + k}
    document = {
        "tune_params_keys": ["block_size_x", "tile"],
        "tune_params": {"block_size_x": [32, 64], "tile": tile_levels},
        "objective": "time",
        "cache": records,
    }
    (tmp_path / name).write_text(json.dumps(document))
    return tmp_path / name


def test_mixed_type_levels_become_a_categorical(tmp_path):
    problem = kt_cache_problem(_cache(tmp_path, [1, "auto", 2.5]))
    assert problem.space["tile"] == Categorical("tile", (1, "auto", 2.5))
    for b in (32, 64):
        for k, t in enumerate([1, "auto", 2.5]):
            assert problem.evaluate({"block_size_x": b, "tile": t}).value == b / 32 + k
    assert problem.optimum == 1.0 and problem.best_known() == {"block_size_x": 32, "tile": 1}


def _t4(tmp_path, invalidity: str):
    results = [
        {
            "configuration": {"block_size_x": b},
            "invalidity": invalidity if b == 32 else "correct",
            "measurements": [{"name": "time", "value": b / 32, "unit": "ms"}],
            "objectives": ["time"],
        }
        for b in (32, 64, 128)
    ]
    path = tmp_path / "t4.json"
    path.write_text(json.dumps({"results": results, "schema_version": "1.0.0"}))
    return path


def test_an_unknown_t4_invalidity_is_a_failure(tmp_path):
    problem = kt_cache_problem(_t4(tmp_path, "compile_error"))
    m = problem.evaluate({"block_size_x": 32})
    assert m.status is Status.RUN_ERROR and "compile_error" in m.error
    assert problem.optimum == 2.0


def test_a_missing_kt_cache_names_its_own_option(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"does not exist; fix the path given as `path`"):
        kt_cache_problem(tmp_path / "nope.json")
    with pytest.raises(DataNotFoundError, match=r"--set problem\.path=PATH") as info:
        kt_cache_problem("kt/nope.json")
    assert "problem.data" not in str(info.value)


def _replay_yaml(tmp_path, rows, **more) -> str:
    """A tuning file of the replay of ``rows`` (in ``tmp_path``)."""
    (tmp_path / "t.csv").write_text(_csv(rows))
    problem = {"name": "replay", "data": str(tmp_path / "t.csv"), "objective": "time"}
    spec = {"problem": {**problem, "parameters": PARAMETERS}, "budget": 2, **more}
    (tmp_path / "t.yaml").write_text(json.dumps(spec))
    return str(tmp_path / "t.yaml")


def test_no_slowdown_for_an_optimum_at_or_below_zero(tmp_path):
    rows = [(x, y, -3.0 if (x, y) == (4, "b") else 1.0) for x, y in GRID]
    more = {"strategy": {"name": "random"}, "seed": 1, "storage": str(tmp_path / "j.db")}
    result = CliRunner().invoke(app, ["tune", _replay_yaml(tmp_path, rows, **more)])
    assert result.exit_code == 0, result.output
    assert "best value" in result.output and "; slowdown" not in result.output


def test_space_shows_the_rows_a_table_left_out(tmp_path):
    rows = [(x, y, 1.0 + x) for x, y in GRID] + [(3, "b", 0.5), (7, "a", 0.1)]
    space = ["space", _replay_yaml(tmp_path, rows)]
    result = CliRunner().invoke(app, space, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "rows left out (not levels of the space): 1, e.g. column 'x', line 11" in result.output
    assert "repeated configurations (the first row of each kept): 1" in result.output
    warned = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 2 and "UserWarning" not in result.output  # one line each


def test_a_replayed_table_is_named_by_its_label(tmp_path):
    (tmp_path / "t.csv").write_text(_csv([(x, y, 1.0 + x) for x, y in GRID]))
    data = str(tmp_path / "t.csv")
    named = make_problem("replay", data=data, objective="time", parameters=PARAMETERS, label="mine")
    assert named.name == "mine" and named.space.name == "mine"
    plain = make_problem("replay", data=data, objective="time", parameters=PARAMETERS)
    assert plain.name == "replay"
