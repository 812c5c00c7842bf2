from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status, find_data, make_problem
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import Boolean, Categorical, Ordinal
from gpautotune.storage import Journal, export_t4, t4_document
from gpautotune.storage._t4 import t4_schema
from gpautotune.tuner import tune
from tests.storage.kt_files import as_t4, cache_counts, small_cache, write_json

STATUS_OF_TIME = {
    "CompilationFailedConfig": Status.BUILD_ERROR,
    "RuntimeFailedConfig": Status.RUN_ERROR,
    "InvalidConfig": Status.INVALID,
}


@pytest.fixture
def cache(tmp_path):
    document = small_cache()
    return document, write_json(tmp_path / "cache.json.gz", document, gz=True)


def _config(record: dict) -> dict:
    """A record's configuration under the space's names (constant dropped, name mapped)."""
    out = {k: v for k, v in record.items() if k in ("block_size_x", "use_shared", "variant")}
    return {**out, "tile_size": record["tile-size"]}


def test_space_types_levels_and_constants(cache):
    problem = kt_cache_problem(cache[1])
    space = problem.space
    assert space.names == ["block_size_x", "tile_size", "use_shared", "variant"]
    assert isinstance(space["block_size_x"], Ordinal) and space["block_size_x"].scale == "log2"
    assert isinstance(space["tile_size"], Ordinal) and space["tile_size"].scale == "index"
    assert isinstance(space["use_shared"], Boolean)
    assert isinstance(space["variant"], Categorical)
    assert problem.constants == {"filter_width": 15}
    assert problem.original_names["tile_size"] == "tile-size"
    assert problem.full_config({"tile_size": 2, "variant": "a"}) == {
        "tile-size": 2,
        "variant": "a",
        "filter_width": 15,
    }


def test_counts_match_the_file(cache):
    document, path = cache
    problem = kt_cache_problem(path)
    counts = cache_counts(document)
    assert problem.space.size == counts["raw"]  # the constant has one level
    valid = problem.space.count_valid()
    assert valid.exact and valid.estimate == counts["rows"] == problem.rows
    assert problem.failed_rows == counts["failed"]
    times = [r["time"] for r in document["cache"].values()]
    assert problem.failures[Status.BUILD_ERROR] == times.count("CompilationFailedConfig")
    assert problem.failures[Status.INVALID] == times.count("InvalidConfig")


def test_every_row_replays_its_record_and_absent_rows_are_invalid(cache):
    document, path = cache
    problem = kt_cache_problem(path)
    for record in document["cache"].values():
        m = problem.evaluate(_config(record))
        time = record["time"]
        if isinstance(time, str):
            assert m.status is STATUS_OF_TIME[time] and m.error == time
        elif time >= 1e20:
            assert m.status is Status.RUN_ERROR and "sentinel" in m.error
        else:
            assert m.ok and m.value == time and m.samples == tuple(record["times"])
    absent = {"block_size_x": 256, "tile_size": 3, "use_shared": True, "variant": "a"}
    assert problem.evaluate(absent).status is Status.INVALID
    assert problem.evaluate({**absent, "tile_size": 9}).status is Status.INVALID
    ok_times = [r["time"] for r in document["cache"].values() if not isinstance(r["time"], str)]
    assert problem.optimum == min(t for t in ok_times if t < 1e20)
    assert problem.evaluate(problem.best_known()).value == problem.optimum


def test_throughput_objective_maximised_through_its_reciprocal(cache):
    document, path = cache
    problem = kt_cache_problem(path, objective="GFLOP/s", direction="max")
    best = max(r["GFLOP/s"] for r in document["cache"].values() if "GFLOP/s" in r)
    assert problem.optimum == pytest.approx(1 / best)
    m = problem.evaluate(problem.best_known())
    assert m.metrics == {"GFLOP/s": best} and m.value == pytest.approx(1 / best)


@pytest.mark.parametrize(
    "strategy",
    [
        "random",
        "sobol",
        "greedy",
        "genetic",
        "annealing",
        pytest.param("gpr", marks=pytest.mark.slow),
    ],
)
def test_strategies_only_propose_rows_and_failures_cost_one_evaluation(cache, strategy):
    document, path = cache
    problem = kt_cache_problem(path)
    options = {"n_init": 4} if strategy == "gpr" else {}  # a few model steps in the budget
    result = tune(
        problem, strategy, 30 if strategy != "gpr" else 8, seed=1, strategy_options=options
    )
    keys = {tuple(_config(r).values()) for r in document["cache"].values()}
    configs = [
        tuple(t.config[n] for n in ("block_size_x", "use_shared", "variant", "tile_size"))
        for t in result.trials
    ]
    assert all(c in keys for c in configs)
    assert len(set(configs)) == len(configs) == result.used
    assert all(t.measurement.error != "absent from the file" for t in result.trials)


def test_random_search_exhausts_exactly_the_rows(cache):
    document, path = cache
    problem = kt_cache_problem(path)
    counts = cache_counts(document)
    result = tune(problem, "random", counts["rows"] + 10, seed=0)
    assert result.used == counts["rows"]  # then nothing is left to propose
    assert sum(not t.ok for t in result.trials) == counts["failed"]


def test_restrictions_leave_out_and_report_violating_rows(cache):
    document, path = cache
    text = "filter_width * tile_size < 40 and block_size_x in [32, 64, 128, 256]"
    with pytest.warns(UserWarning, match="violate the restrictions"):
        problem = kt_cache_problem(path, restrictions=[text])
    violating = sum(r["tile-size"] == 3 for r in document["cache"].values())
    assert problem.violations[0] == violating and len(problem.violations[1]) == 3
    assert problem.rows == cache_counts(document)["rows"] - violating
    assert problem.space.count_valid().estimate == problem.rows
    row = next(r for r in document["cache"].values() if r["tile-size"] == 3)
    assert problem.evaluate(_config(row)).status is Status.INVALID
    with pytest.raises(ConfigError, match="unknown name 'tile'"):
        kt_cache_problem(path, restrictions=["tile * 2 < 4"])


def test_t4_file_is_the_same_problem(cache, tmp_path):
    document, path = cache
    t4 = kt_cache_problem(write_json(tmp_path / "r.json", as_t4(document)))
    problem = kt_cache_problem(path)
    assert (t4.rows, t4.failures, t4.optimum) == (problem.rows, problem.failures, problem.optimum)


def test_registry_data_lookup_and_pickling(cache, monkeypatch):
    document, path = cache
    monkeypatch.setenv("GPAUTOTUNE_DATA", str(Path(path).parent))
    problem = make_problem("kt-cache", path="cache.json.gz")
    copy = pickle.loads(pickle.dumps(problem))
    config = problem.best_known()
    assert copy.evaluate(config) == problem.evaluate(config)
    assert copy.space.count_valid().estimate == problem.rows
    assert problem.describe()["path"] == "cache.json.gz"


def test_t4_export_validates_and_replays_the_same_values(cache, tmp_path):
    document, path = cache
    journal = Journal(tmp_path / "run.db")
    tune(kt_cache_problem(path), "random", 40, seed=3, storage=journal)
    out = export_t4(journal, tmp_path / "out.json", validate=True)
    exported = json.loads(out.read_text())
    jsonschema.validate(exported, t4_schema())
    assert exported == json.loads(json.dumps(t4_document(journal)))
    first = exported["results"][0]["configuration"]
    assert set(first) == set(document["tune_params"])  # original names, constant included
    back = kt_cache_problem(out)
    trials = journal.trials(1)
    assert back.rows == len(trials) == 40
    for t in trials:
        m = back.evaluate(t.config)
        assert (m.status, m.value, m.samples) == (t.status, t.value, t.measurement.samples)
    assert gzip.decompress(export_t4(journal, tmp_path / "o.json.gz").read_bytes())


def test_export_of_several_runs_needs_a_run_id(cache, tmp_path):
    journal = Journal(tmp_path / "run.db")
    for seed in (1, 2):
        tune(kt_cache_problem(cache[1]), "random", 5, seed=seed, storage=journal)
    with pytest.raises(ConfigError, match="--run"):
        t4_document(journal)
    assert len(t4_document(journal, 2)["results"]) == 5


@pytest.mark.slow
def test_all_shared_caches_and_t4_files_load_with_their_counts():
    files = sorted(find_data("kt-caches/README.md").parent.glob("*/*.json.gz"))
    assert len(files) == 14
    for path in files:
        data = json.loads(gzip.decompress(path.read_bytes()))
        if "cache" in data:
            times = [r["time"] for r in data["cache"].values()]
            rows, failed = len(times), sum(isinstance(t, str) for t in times)
            raw = np.prod([len(v) for v in data["tune_params"].values()])
        else:
            rows = len(data["results"])
            failed = sum(r["invalidity"] != "correct" for r in data["results"])
            raw = np.prod(
                [
                    len({str(r["configuration"][k]) for r in data["results"]})
                    for k in data["results"][0]["configuration"]
                ]
            )
        problem = kt_cache_problem(path)
        assert (problem.rows, problem.failed_rows, problem.space.size) == (rows, failed, raw)
        assert problem.space.count_valid().estimate == rows
        assert problem.optimum == pytest.approx(min(problem.measured_values()))


def test_a_cache_named_alone_or_by_its_full_path_is_one_problem(cache, monkeypatch):
    path = cache[1]
    monkeypatch.chdir(path.parent)
    alone = kt_cache_problem(path.name)
    assert alone.name == f"{path.parent.name}/cache" == kt_cache_problem(path).name


def test_a_cache_compressed_since_resumes_its_run(tmp_path):
    document = small_cache()
    plain = write_json(tmp_path / "c.json", document)
    packed = write_json(tmp_path / "c.json.gz", document, gz=True)
    db = tmp_path / "j.db"
    first = tune(kt_cache_problem(plain, label="c"), "random", 3, seed=1, storage=db)
    again = tune(kt_cache_problem(packed, label="c"), "random", 5, seed=1, storage=db)
    assert again.run_id == first.run_id and len(again.trials) == 5
