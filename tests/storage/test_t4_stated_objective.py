"""Problems state their objective's unit and direction; runs store them (outside the key)
and the T4 export writes them; the ``kt-cache`` replay of an export reads its metadata
back. Runs stored before the statements were kept export as they did.

Each test fails without the change, except where it says it guards the fallback.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Measurement, Problem
from gpautotune.problems.kernel import c_kernel
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.problems.paced import PacedProblem
from gpautotune.space import Categorical, Ordinal, Space
from gpautotune.storage import Journal, RunObjective, RunSpec, export_t4, t4_document
from gpautotune.storage._kernel_tuner import read_tuning_file
from gpautotune.trial import Trial
from gpautotune.tuner import tune
from tests.storage.kt_files import write_json

#: A categorical whose levels are not in sorted order, nor in the order trials meet them.
SPACE = Space([Ordinal("unroll", (1, 2, 4)), Categorical("mode", ("b", "a"))], name="scale")
CONFIGS = [{"unroll": 4, "mode": "a"}, {"unroll": 1, "mode": "b"}, {"unroll": 2, "mode": "a"}]
#: What ``c-kernel`` stores as its settings, trimmed, with a metric objective.
C_KERNEL = {"name": "c-kernel", "kernel": "scale", "objective": "score", "metrics": {}}


def score(config: dict) -> float:
    return config["unroll"] * (3.0 if config["mode"] == "a" else 1.0)


def maximised(config: dict) -> Measurement:
    """``score`` maximised: the value is its reciprocal, the metric keeps it."""
    return Measurement.success(1 / score(config), (0.5,), score=score(config), time_s=0.5)


class Stated(Problem):
    """A problem that states its objective, named as a problem the old export guessed."""

    space = SPACE

    def __init__(self, name: str, objective: str, unit: str, direction: str, samples: str):
        self.name, self.objective = name, objective
        self.objective_unit, self.direction, self.samples_unit = unit, direction, samples

    def evaluate(self, config: dict) -> Measurement:
        return maximised(config) if self.direction == "max" else Measurement.success(1.0)

    def describe(self) -> dict:
        return {"name": self.name, "objective": self.objective}


def stored_run(path, settings: dict, objective: RunObjective | None, trials=CONFIGS) -> Journal:
    """A journal with one run of ``settings`` over :data:`SPACE`; its trials meet
    ``mode`` as ``a`` first."""
    journal = Journal(path)
    spec = RunSpec(settings["name"], settings, "random", {}, 1, SPACE.describe())
    if objective is not None:
        spec = replace(spec, objective=objective)
    run = journal.open_run(spec, len(trials))
    journal.add_trials(
        run.id, [Trial(i, c, maximised(c), started_at=1.7e9) for i, c in enumerate(trials)]
    )
    return journal


def units(document: dict) -> dict[str, str]:
    return {m["name"]: m["unit"] for m in document["results"][0]["measurements"]}


# ------------------------------------------------------------ export -> kt-cache replay
def test_a_round_trip_keeps_the_level_order_and_a_max_direction(tmp_path):
    settings = {"name": "throughput", "objective": "score"}
    journal = stored_run(tmp_path / "j.db", settings, RunObjective("items/s", "max", "s"))
    out = export_t4(journal, tmp_path / "out.json", validate=True)
    back = kt_cache_problem(out)  # no `direction:`: the file's metadata says max
    assert back.direction == "max"
    assert back.space["mode"].levels == ("b", "a")  # the space's order, not the trials'
    assert back.space["unroll"].levels == (1, 2, 4)
    for trial in journal.trials(1):
        assert back.evaluate(trial.config).value == pytest.approx(trial.value)
    assert kt_cache_problem(out, direction="min").direction == "min"  # the user's wins
    # the metadata's direction is about its objective, not another field read instead
    assert read_tuning_file(out, objective="time_s").direction is None


def test_a_replayed_export_states_the_units_the_file_states(tmp_path):
    """An export of a kernel timed in seconds replays in seconds (not Kernel Tuner's ms),
    and so exports again with its units."""
    settings = {"name": "own", "objective": "time"}
    journal = stored_run(tmp_path / "j.db", settings, RunObjective("s", "min", "s"))
    out = export_t4(journal, tmp_path / "out.json")
    back = kt_cache_problem(out)
    assert (back.objective_unit, back.samples_unit) == ("s", "s")
    again = tune(back, "random", budget=3, seed=1, storage=tmp_path / "again.db")
    with Journal(tmp_path / "again.db", read_only=True) as replayed:
        document = t4_document(replayed, again.run_id)
    assert document["metadata"]["timeunit"] == "seconds" and units(document)["time"] == "s"


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        ({"tune_params": {"x": [1, 2]}}, r"metadata\.tune_params\['x'\].*lacks \[3\]"),
        ({"tune_params": {"x": [1, 2, 3], "y": [0]}}, r"metadata\.tune_params lists the keys"),
        ({"tune_params": {"x": 3}}, r"metadata\.tune_params must map"),
        ({"direction": "up"}, r"metadata\.direction is 'up'"),
    ],
)
def test_bad_metadata_is_refused_naming_the_file_and_key(tmp_path, metadata, match):
    results = [
        {
            "configuration": {"x": x},
            "invalidity": "correct",
            "measurements": [{"name": "time", "value": x / 10, "unit": "ms"}],
            "objectives": ["time"],
        }
        for x in (1, 2, 3)
    ]
    path = write_json(tmp_path / "bad.json", {"results": results, "metadata": metadata})
    with pytest.raises(ConfigError, match=match) as caught:
        kt_cache_problem(path)
    assert "bad.json" in str(caught.value)


# ------------------------------------------------------------ problems state, runs store
@pytest.mark.parametrize(
    ("name", "objective", "stated", "timeunit"),
    [
        # named as the C kernel problem (seconds), stating microseconds
        ("c-kernel", "time", RunObjective("us", "min", "us"), "microseconds"),
        # named as the Laplacian (seconds per pixel), stating nothing
        ("laplacian", "value", RunObjective(), None),
        # a maximised objective under a name the old export knew nothing of
        ("mine", "score", RunObjective("items/s", "max", "s"), "seconds"),
    ],
)
def test_a_problem_is_exported_with_what_it_states_whatever_its_name(
    tmp_path, name, objective, stated, timeunit
):
    problem = Stated(name, objective, stated.unit, stated.direction, stated.samples_unit)
    journal = Journal(tmp_path / "j.db")
    tune(problem, "random", 3, seed=1, storage=journal)
    assert journal.get_run(1).objective == stated
    document = t4_document(journal)
    assert units(document)[objective] == stated.unit
    assert document["metadata"].get("timeunit") == timeunit
    assert document["metadata"]["direction"] == stated.direction


def test_the_problems_that_know_their_objective_state_it(tmp_path):
    kernel = c_kernel(
        "void scale(float *y, int n) { }",
        "scale",
        [{"name": "y", "zeros": "n"}, {"name": "n", "value": "n"}],
        {"unroll": [1, 2]},
        sizes={"n": 8},
        objective="GB/s",
        metrics={"GB/s": "4 * n / time / 1e9"},
    )
    assert (kernel.objective_unit, kernel.direction, kernel.samples_unit) == ("GB/s", "max", "s")
    paced = PacedProblem(kernel, scale=1.0, max_s=1.0, failure_s=0.0)
    assert (paced.objective_unit, paced.direction, paced.samples_unit) == ("GB/s", "max", "s")
    records = [{"x": x, "time": x / 10, "GFLOP/s": 10.0 / x, "energy": 1.0 * x} for x in (1, 2, 3)]
    cache = {
        "tune_params_keys": ["x"],
        "tune_params": {"x": [1, 2, 3]},
        "objective": "time",
        "cache": {str(r["x"]): r for r in records},
    }
    path = write_json(tmp_path / "c.json", cache)
    stated = {
        objective: (p.objective_unit, p.direction, p.samples_unit)
        for objective in ("time", "GFLOP/s")
        for p in [kt_cache_problem(path, objective=objective)]
    }
    assert stated == {"time": ("ms", "min", "ms"), "GFLOP/s": ("GFLOP/s", "max", "ms")}


def test_laplacian_tables_state_seconds_per_pixel(laplacian):
    assert (laplacian.objective_unit, laplacian.samples_unit) == ("s/pixel", "s/pixel")


def test_the_objective_is_kept_outside_the_run_key(tmp_path):
    """An old run (no objective stored) keeps its key; resuming it records the objective,
    and joining journals carries it."""
    journal = stored_run(tmp_path / "old.db", C_KERNEL, None)
    old = journal.get_run(1)
    assert old.objective is None
    spec = RunSpec("c-kernel", C_KERNEL, "random", {}, 1, SPACE.describe())
    stated = replace(spec, objective=RunObjective("score/s", "max", "s"))
    assert stated.key == spec.key == old.key
    resumed = journal.open_run(stated, 3)
    assert resumed.id == old.id and resumed.objective == stated.objective
    journal.finish_run(resumed.id)
    joined = Journal(tmp_path / "joined.db")
    assert joined.copy_runs(journal) == (1, 0)
    assert joined.get_run(1).objective == stated.objective


# ------------------------------------------------------------ runs stored before
def test_a_run_stored_before_exports_as_it_did(tmp_path):
    """Guards the fallback (passes without the change too, but for the dropped table): a
    journal of the earlier schema, read-only, without the objectives' table."""
    path = tmp_path / "old.db"
    stored_run(path, C_KERNEL, None).close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE run_objective")
    conn.close()
    journal = Journal(path, read_only=True)
    assert journal.get_run(1).objective is None
    document = t4_document(journal)
    # guessed from the name and the trials, as before: seconds, and max (value = 1/metric)
    assert document["metadata"]["timeunit"] == "seconds"
    assert document["metadata"]["direction"] == "max"
    assert units(document) == {"score": "", "time_s": "s"}


def test_a_listed_level_no_row_holds_is_left_out(tmp_path):
    """The export lists every level of the space it tuned; a level no trial measured is
    left out of the replay, so a run stored before metadata was read keeps its space."""
    journal = stored_run(tmp_path / "j.db", {"name": "own", "objective": "time"}, None)
    document = t4_document(journal, 1)
    document["metadata"]["tune_params"]["unroll"] = [1, 2, 4, 8]  # 8: no row holds it
    path = write_json(tmp_path / "t4.json", document)
    assert kt_cache_problem(path).space["unroll"].levels == (1, 2, 4)
