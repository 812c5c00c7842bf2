"""Warm starts from the field's files (:func:`gpautotune.tuner.import_trials`): a Parquet
table, a T4 results file and a Kernel Tuner cache each warm-start a run, by
``tune(warm_start=path)`` and by the tuning YAML's ``warm_start:``; a bad file is one
``ConfigError`` naming it. Each test fails without the change (a warm start read CSV only,
and ``tune`` took trials only)."""

from __future__ import annotations

import gzip
import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.config import load_config, warm_start_trials
from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems import Problem
from gpautotune.problems.kt_cache import KtCacheProblem, kt_cache_problem
from gpautotune.problems.synthetic import BoothProblem
from gpautotune.space import Boolean, Categorical, IntRange, Ordinal, Space
from gpautotune.storage import Journal, export_t4, export_table
from gpautotune.strategies.random_sample import RandomSampling
from gpautotune.trial import Origin, Trial
from gpautotune.tuner import TuneResult, import_trials, tune
from tests.storage.kt_files import as_t4, small_cache, write_json

#: The small cache's tuned parameters as a space of their own (``tile-size`` mapped).
SPACE = Space(
    [
        Ordinal("block_size_x", (32, 64, 128, 256)),
        Ordinal("tile_size", (1, 2, 3)),
        Boolean("use_shared"),
        Categorical("variant", ("a", "b")),
    ]
)


class Told(RandomSampling):
    """Random sampling that keeps each batch of trials it is told."""

    def __init__(self, space: Space) -> None:
        super().__init__(space, seed=5)
        self.told: list[list[Trial]] = []

    def tell(self, trials: list[Trial]) -> None:
        self.told.append(list(trials))
        super().tell(trials)


class InSeconds(Problem):
    """The cache's kernel measured as an own kernel is: ``time`` in seconds."""

    name = "in-seconds"
    objective_unit = samples_unit = "s"

    def __init__(self, unit: str = "s") -> None:
        self.space, self.objective_unit = SPACE, unit

    def evaluate(self, config: dict) -> Measurement:
        return Measurement.success(1.0, samples=(1.0,))

    def describe(self) -> dict:
        return {"name": self.name, "objective": "time"}


def _quiet_problem(path: Path) -> KtCacheProblem:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kt_cache_problem(path)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return write_json(tmp_path / "cache.json", small_cache())


def _warm_started(result: TuneResult, strategy: Told, expected: list[Trial]) -> None:
    """The run's first trials are ``expected`` as warm-start trials: stored so, told to
    the strategy first (in one call), and none of them measured again."""
    n = len(expected)
    stored = Journal(result.storage).trials(result.run_id)
    for trials in (result.trials[:n], stored[:n], strategy.told[0]):
        assert [t.origin for t in trials] == [Origin.WARM_START] * n
        assert [t.config for t in trials] == [t.config for t in expected]
        assert [t.status for t in trials] == [t.status for t in expected]
        assert [t.value for t in trials] == pytest.approx([t.value for t in expected])
    measured = result.trials[n:]
    assert measured and all(t.counts_in_budget for t in measured)
    assert not {str(t.config) for t in measured} & {str(t.config) for t in expected}


def test_a_parquet_export_warm_starts_a_run(cache, tmp_path):
    problem = _quiet_problem(cache)
    earlier = tune(problem, "random", 12, seed=1, storage=tmp_path / "a.db")
    path = export_table(Journal(tmp_path / "a.db"), tmp_path / "earlier.parquet")
    strategy = Told(problem.space)
    result = tune(problem, strategy, 6, seed=2, storage=tmp_path / "b.db", warm_start=path)
    _warm_started(result, strategy, earlier.trials)
    assert {t.status for t in result.trials[:12]} > {Status.OK}  # failures kept as failures


def test_a_t4_export_warm_starts_a_run_from_the_yaml(cache, tmp_path):
    problem = _quiet_problem(cache)
    earlier = tune(problem, "random", 12, seed=1, storage=tmp_path / "a.db")
    path = export_t4(Journal(tmp_path / "a.db"), tmp_path / "earlier.json.gz")
    yaml = tmp_path / "warm.yaml"
    yaml.write_text(
        f"problem: {{name: kt-cache, path: {cache}}}\nstrategy: {{name: random}}\n"
        f"budget: 6\nseed: 2\nstorage: {tmp_path / 'b.db'}\nwarm_start: {path}\n"
    )
    warm = warm_start_trials(load_config(yaml), problem)
    assert [t.config for t in warm] == [t.config for t in earlier.trials]
    assert [t.status for t in warm] == [t.status for t in earlier.trials]
    assert [t.value for t in warm] == pytest.approx([t.value for t in earlier.trials])
    out = CliRunner().invoke(app, ["tune", str(yaml)])
    assert out.exit_code == 0, out.output
    [run] = Journal(tmp_path / "b.db").runs()
    stored = Journal(tmp_path / "b.db").trials(run.id)
    assert [t.origin for t in stored] == [Origin.WARM_START] * 12 + [Origin.TUNER] * 6
    assert [t.config for t in stored[:12]] == [t.config for t in earlier.trials]


def _partial_cache(tmp_path: Path, keep: int = 20, t4: bool = False) -> tuple[Path, list[dict]]:
    """The small cache's first ``keep`` records, as a cache or as Kernel Tuner's T4."""
    document = small_cache()
    records = list(document["cache"].values())[:keep]
    document["cache"] = {str(i): r for i, r in enumerate(records)}
    if t4:
        return write_json(tmp_path / "partial-t4.json", as_t4(document)), records
    return write_json(tmp_path / "partial.json.gz", document, gz=True), records


@pytest.mark.parametrize("t4", [False, True], ids=["cache", "kernel-tuner-t4"])
def test_a_kernel_tuner_file_warm_starts_a_run_in_the_problems_unit(tmp_path, t4):
    path, records = _partial_cache(tmp_path, t4=t4)
    strategy = Told(SPACE)
    result = tune(InSeconds(), strategy, 4, storage=tmp_path / "s.db", warm_start=path)
    expected = []
    for i, r in enumerate(records):
        config = {
            "block_size_x": r["block_size_x"],
            "tile_size": r["tile-size"],  # Kernel Tuner's name mapped as kt-cache maps it
            "use_shared": r["use_shared"],
            "variant": r["variant"],
        }
        time = r["time"]
        if isinstance(time, str) or time >= 1e20:  # a marker, or an old sentinel
            status = {
                "CompilationFailedConfig": Status.BUILD_ERROR,
                "InvalidConfig": Status.INVALID,
            }
            m = Measurement.failure(status.get(time, Status.RUN_ERROR))
        else:
            m = Measurement.success(time / 1000)  # Kernel Tuner's ms as the problem's s
        expected.append(Trial(i, config, m))
    _warm_started(result, strategy, expected)
    failed = {Status.BUILD_ERROR, Status.RUN_ERROR, Status.INVALID}
    assert {t.status for t in expected} == {Status.OK, *failed}  # every kind of failure
    first = next(i for i, r in enumerate(records) if _measured(r))
    samples = result.trials[first].measurement.samples  # run times, in seconds too
    assert samples == pytest.approx([s / 1000 for s in records[first]["times"]])


def test_a_cache_keeps_kernel_tuners_units_and_directions_for_a_kt_cache_problem(cache, tmp_path):
    path, records = _partial_cache(tmp_path)
    ms = import_trials(path, _quiet_problem(cache))
    assert [t.value for t in ms if t.ok] == [r["time"] for r in records if _measured(r)]
    throughput = import_trials(path, SPACE, "GFLOP/s")  # maximised: the value is 1 / it
    assert [t.value for t in throughput if t.ok] == pytest.approx(
        [1 / r["GFLOP/s"] for r in records if _measured(r)]
    )
    assert [t.measurement.metrics["GFLOP/s"] for t in throughput if t.ok] == pytest.approx(
        [r["GFLOP/s"] for r in records if _measured(r)]
    )


def _measured(record: dict) -> bool:
    return isinstance(record["time"], float) and record["time"] < 1e20


# ------------------------------------------------------------------ bad files
def _error(path: Path, target: Problem | Space = SPACE, *words: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ConfigError) as err:
            import_trials(path, target)
    message = str(err.value)
    assert str(path) in message and "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_configurations_outside_the_space_are_refused_naming_the_file(tmp_path):
    path, _ = _partial_cache(tmp_path)
    narrow = Space([*SPACE.parameters[:1], Ordinal("tile_size", (1, 2)), *SPACE.parameters[2:]])
    _error(path, narrow, "records are not configurations of the space", "3 is not a level")
    bound = Space(SPACE.parameters, constraints=["block_size_x * tile_size <= 64"])
    _error(path, bound, "break the space's constraints", "block_size_x * tile_size <= 64")
    csv = tmp_path / "rows.csv"
    csv.write_text("x1,x2,value\n1,1,3.0\n9,9,4.0\n")
    booth = Space([IntRange("x1", -10, 10), IntRange("x2", -10, 10)], constraints=["x1 <= 5"])
    _error(csv, booth, "row 3 breaks", "x1 <= 5", "remove them from the file")


def test_parameters_the_space_lacks_or_the_file_lacks_are_refused(tmp_path):
    path, _ = _partial_cache(tmp_path)
    fewer = Space(SPACE.parameters[:3])
    _error(path, fewer, "parameter(s) the space lacks", "variant")
    more = Space([*SPACE.parameters, IntRange("unroll", 1, 4)])
    _error(path, more, "records no values of the space's parameter(s) ['unroll']")
    parquet = tmp_path / "t.parquet"
    table = {"block_size_x": [32], "variant": ["a"], "value": [1.0]}
    pd.DataFrame(table).to_parquet(parquet)
    _error(parquet, SPACE, "lacks columns", "tile_size")


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("runs.db", b"SQLite format 3\x00", ["'.db' is none of these", "gpautotune export"]),
        ("runs.txt", b"x", ["'.txt' is none of these", ".parquet", ".json.gz"]),
        ("t.parquet", b"PAR1 not really", ["not a readable Parquet file"]),
        ("c.json.gz", gzip.compress(b'{"cache": {'), ["not valid JSON"]),
        ("c.json", b"[1, 2]", ["not an object"]),
    ],
)
def test_an_unknown_suffix_or_an_unreadable_file_is_refused(tmp_path, name, content, words):
    (tmp_path / name).write_bytes(content)
    _error(tmp_path / name, SPACE, *words)


def test_a_unit_that_does_not_convert_is_refused_and_a_missing_file_named(tmp_path):
    path, _ = _partial_cache(tmp_path)
    _error(path, InSeconds(unit="s/pixel"), "records 'time' in ms", "in s/pixel")
    assert math.isclose(  # a problem in microseconds gets the milliseconds times 1000
        import_trials(path, InSeconds(unit="us"))[1].value, 1000 * small_cache_time(path, 1)
    )
    with pytest.raises(FileNotFoundError, match="nowhere.json"):
        tune(BoothProblem(), "random", 2, warm_start=tmp_path / "nowhere.json")


def small_cache_time(path: Path, i: int) -> float:
    return list(json.loads(gzip.decompress(path.read_bytes()))["cache"].values())[i]["time"]


def test_another_recorded_field_is_refused_where_its_unit_is_not_the_problems(tmp_path):
    """Reading ``GFLOP/s`` into a problem measured in seconds would store throughputs'
    reciprocals as seconds: refused like any unit that does not convert."""
    path, _ = _partial_cache(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ConfigError, match=r"records 'GFLOP/s' in GFLOP/s.*in s"):
            import_trials(path, InSeconds(), "GFLOP/s")


def test_run_times_in_a_unit_that_does_not_convert_are_left_out(tmp_path):
    path, records = _partial_cache(tmp_path)

    class PerPixel(InSeconds):
        samples_unit = "s/pixel"

    trials = import_trials(path, PerPixel())
    first = next(i for i, r in enumerate(records) if _measured(r))
    assert trials[first].ok and trials[first].measurement.samples == ()
    assert trials[first].value == pytest.approx(records[first]["time"] / 1000)


def test_a_tuning_run_takes_a_warm_start_file_too(tmp_path):
    path, records = _partial_cache(tmp_path)
    from gpautotune import TuningRun

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = TuningRun(InSeconds(), "random", storage=tmp_path / "r.db", budget=2, warm_start=path)
    warm = [t for t in run.trials if t.origin is Origin.WARM_START]
    assert len(warm) == len(records)
