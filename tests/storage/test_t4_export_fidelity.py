"""T4 export fidelity: units from the run's problem, the space's key and level order, every
recorded metric in ``measurements``, and the objective's direction in ``metadata``.

Each test fails without its fix (found by probing the T4 export).
"""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.problems import Measurement
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import Categorical, Ordinal, Space
from gpautotune.storage import Journal, RunSpec, t4_document
from gpautotune.storage._t4 import t4_schema
from gpautotune.trial import Trial
from gpautotune.tuner import tune
from tests.storage.kt_files import write_json

SPACE = Space([Ordinal("unroll", (1, 2, 4)), Categorical("mode", ("b", "a"))], name="scale")
#: What ``c-kernel`` stores as its settings (``KernelProblem.describe()``), trimmed.
C_KERNEL = {"name": "c-kernel", "kernel": "scale", "objective": "time", "metrics": {}}


def journal_of(path, problem: str, settings: dict, measurements: list[Measurement]) -> Journal:
    """A journal with one run of ``problem`` (its stored settings) over :data:`SPACE`."""
    journal = Journal(path)
    spec = RunSpec(problem, settings, "random", {}, 1, SPACE.describe())
    run = journal.open_run(spec, len(measurements))
    configs = [{"unroll": 4, "mode": "a"}, {"unroll": 1, "mode": "b"}, {"unroll": 2, "mode": "a"}]
    journal.add_trials(
        run.id, [Trial(i, configs[i], m, started_at=1.7e9) for i, m in enumerate(measurements)]
    )
    return journal


def valid(document: dict) -> dict:
    jsonschema.validate(document, t4_schema())
    return document


def by_name(entry: dict) -> dict[str, tuple]:
    return {m["name"]: (m["value"], m["unit"]) for m in entry["measurements"]}


def small_cache(keys: list[str], objective: str = "time") -> dict:
    """A cache over ``b`` (numbers), ``c`` (text, levels not in sorted order), ``a`` and
    the constant ``k``, its keys listed in the order ``keys``; every row measured."""
    tune_params = {"a": [1, 2, 4], "b": [10, 20], "c": ["y", "x"], "k": [7]}
    cache = {}
    for a in tune_params["a"]:
        for b in tune_params["b"]:
            for c in tune_params["c"]:
                record = {"a": a, "b": b, "c": c, "k": 7}
                value = a + b / 10 + (c == "x")
                record.update({objective: value, "times": [value, value]})
                cache[",".join(str(record[k]) for k in keys)] = record
    return {
        "tune_params_keys": keys,
        "tune_params": {k: tune_params[k] for k in keys},
        "objective": objective,
        "cache": cache,
    }


# ---------------------------------------------------------------- fault 2: units
def test_own_kernel_times_are_labelled_seconds(tmp_path):
    m = Measurement.success(8.6e-08, samples=(1.3e-07, 8.6e-08), time_s=8.6e-08)
    document = valid(t4_document(journal_of(tmp_path / "j.db", "c-kernel", C_KERNEL, [m])))
    assert by_name(document["results"][0])["time"] == (8.6e-08, "s")
    assert document["metadata"]["timeunit"] == "seconds"


@pytest.mark.parametrize(
    ("problem", "settings", "unit", "timeunit"),
    [
        ("laplacian", {"name": "laplacian", "repeats": 5}, "s/pixel", "seconds per pixel"),
        # a replayed CSV table: nothing says its unit, so nothing is claimed
        ("laplacian-k40c", {"name": "laplacian-k40c", "objective": "time"}, "", None),
    ],
)
def test_other_problems_get_their_own_unit_or_none(tmp_path, problem, settings, unit, timeunit):
    m = Measurement.success(2.0e-9, samples=(2.0e-9,))
    document = valid(t4_document(journal_of(tmp_path / "j.db", problem, settings, [m])))
    objective = settings.get("objective", "value")
    assert by_name(document["results"][0])[objective] == (2.0e-9, unit)
    assert document["metadata"].get("timeunit") == timeunit


def t4_file(path, timeunit: str, unit: str):
    """A T4 file over ``x`` whose times are in ``timeunit`` (measurements say ``unit``)."""
    results = [
        {
            "configuration": {"x": x},
            "times": {"runtimes": [x / 100]},
            "invalidity": "correct",
            "correctness": 1,
            "measurements": [{"name": "time", "value": x / 100, "unit": unit}],
            "objectives": ["time"],
        }
        for x in (1, 2, 3, 4)
    ]
    return write_json(
        path, {"schema_version": "1.0.0", "results": results, "metadata": {"timeunit": timeunit}}
    )


def test_a_replayed_cache_stays_in_milliseconds(tmp_path):
    journal = Journal(tmp_path / "run.db")
    path = write_json(tmp_path / "c.json", small_cache(["a", "b", "c", "k"]))
    tune(kt_cache_problem(path), "random", 3, seed=1, storage=journal)
    document = valid(t4_document(journal))
    assert document["metadata"]["timeunit"] == "milliseconds"
    assert by_name(document["results"][0])["time"][1] == "ms"


# ---------------------------------------------------------------- fault 11: order
def test_configuration_keys_follow_the_space_order(tmp_path):
    journal = Journal(tmp_path / "run.db")
    path = write_json(tmp_path / "c.json", small_cache(["b", "c", "a", "k"]))
    tune(kt_cache_problem(path), "random", 12, seed=1, storage=journal)
    out = tmp_path / "out.json"
    out.write_text(json.dumps(valid(t4_document(journal))))
    document = json.loads(out.read_text())
    assert {tuple(e["configuration"]) for e in document["results"]} == {("b", "c", "a", "k")}
    assert document["metadata"]["tune_params_keys"] == ["b", "c", "a", "k"]
    back = kt_cache_problem(out)
    assert [p.name for p in back.space.parameters] == ["b", "c", "a"]


def test_each_parameters_levels_are_recorded_in_the_space_order(tmp_path):
    journal = Journal(tmp_path / "run.db")
    path = write_json(tmp_path / "c.json", small_cache(["b", "c", "a", "k"]))
    source = kt_cache_problem(path)
    assert source.space["c"].levels == ("y", "x")
    tune(source, "random", 5, seed=1, storage=journal)
    levels = valid(t4_document(journal))["metadata"]["tune_params"]
    assert levels == {"b": [10, 20], "c": ["y", "x"], "a": [1, 2, 4], "k": [7]}
    assert list(levels) == ["b", "c", "a", "k"]


# ---------------------------------------------------------------- fault 11: measurements
def test_every_numeric_metric_is_written_with_its_unit(tmp_path):
    ok = Measurement.success(
        8.6e-08,
        samples=(1.3e-07, 8.6e-08),
        time_s=8.6e-08,
        compile_s=0.12,
        max_abs_error=0.0,
        copy_bandwidth_Bps=5.0e11,
        bound_fraction=0.4,
        **{"GB/s": 93.0, "device": "gpu 0", "refused": False, "per_size": {"a": 1.0}},
    )
    wrong = Measurement.failure("wrong_result", "y: 3 of 4 elements differ", max_abs_error=0.5)
    journal = journal_of(tmp_path / "j.db", "c-kernel", C_KERNEL, [ok, wrong])
    first, second = valid(t4_document(journal))["results"]
    assert by_name(first) == {
        "time": (8.6e-08, "s"),
        "time_s": (8.6e-08, "s"),
        "compile_s": (0.12, "s"),
        "max_abs_error": (0.0, ""),
        "copy_bandwidth_Bps": (5.0e11, "B/s"),
        "bound_fraction": (0.4, ""),
        "GB/s": (93.0, "GB/s"),
    }  # text, booleans and mappings are not numeric quantities
    assert by_name(second) == {"time": ("RuntimeFailedConfig", "s"), "max_abs_error": (0.5, "")}


# ---------------------------------------------------------------- direction
def test_a_maximised_objective_records_its_direction(tmp_path):
    journal = Journal(tmp_path / "run.db")
    path = write_json(tmp_path / "c.json", small_cache(["a", "b", "c", "k"], objective="GFLOP/s"))
    tune(kt_cache_problem(path, direction="max"), "random", 4, seed=1, storage=journal)
    document = valid(t4_document(journal))
    assert document["metadata"]["direction"] == "max"
    assert document["metadata"]["objective"] == "GFLOP/s"
    assert by_name(document["results"][0])["GFLOP/s"][1] == "GFLOP/s"


@pytest.mark.parametrize(("value", "direction"), [(1 / 93.0, "max"), (93.0, "min")])
def test_a_kernel_metric_objective_records_its_direction(tmp_path, value, direction):
    """A kernel problem stores no direction: the value (minimised) being the metric's
    reciprocal says it is maximised."""
    m = Measurement.success(value, time_s=1e-6, **{"GB/s": 93.0})
    settings = {**C_KERNEL, "objective": "GB/s", "metrics": {"GB/s": "8 * n / time / 1e9"}}
    document = valid(t4_document(journal_of(tmp_path / "j.db", "c-kernel", settings, [m])))
    assert document["metadata"]["direction"] == direction
    assert by_name(document["results"][0])["GB/s"] == (93.0, "GB/s")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_c_kernel_run_exports_seconds_and_validates_on_the_command_line(tmp_path):
    """The settings a real ``c-kernel`` run stores are the ones the export reads."""
    from gpautotune.execution import InProcessEvaluator
    from gpautotune.problems.kernel import c_kernel

    source = (
        "void scale(float *y, const float *x, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }"
    )
    problem = c_kernel(
        source,
        "scale",
        [{"name": "y", "zeros": "n"}, {"name": "x", "arange": "n"}, {"name": "n", "value": "n"}],
        {"unroll": [4, 1]},
        sizes={"n": 100},
        answer={"y": "x"},
        iterations=2,
        timeout_s=5,
    )
    journal = Journal(tmp_path / "run.db")
    tune(problem, "random", 1, seed=0, storage=journal, evaluator=InProcessEvaluator())
    target = tmp_path / "t4.json"
    out = CliRunner().invoke(
        app, ["export", str(tmp_path / "run.db"), "--t4", str(target), "--validate"]
    )
    assert out.exit_code == 0, out.output
    document = json.loads(target.read_text())
    [entry] = document["results"]
    assert entry["measurements"][0]["name"] == "time" and entry["measurements"][0]["unit"] == "s"
    assert by_name(entry)["time_s"][1] == "s"
    assert document["metadata"]["timeunit"] == "seconds"
    assert document["metadata"]["direction"] == "min"
