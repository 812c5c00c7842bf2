from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.storage import read_tuning_file
from tests.storage.kt_files import as_t4, cache_counts, small_cache, write_json


def _kinds(records) -> dict[str, int]:
    return {k: records.invalidity.count(k) for k in set(records.invalidity)}


def test_cache_rows_failures_and_levels(tmp_path):
    document = small_cache()
    records = read_tuning_file(write_json(tmp_path / "c.json.gz", document, gz=True))
    counts = cache_counts(document)
    assert records.format == "cache" and records.objective == "time"
    assert len(records) == counts["rows"]
    assert int(np.isnan(records.values).sum()) == counts["failed"]
    times = [r["time"] for r in document["cache"].values()]
    assert _kinds(records) == {
        "correct": sum(not isinstance(t, str) and t < 1e20 for t in times),
        "compile": times.count("CompilationFailedConfig"),
        "runtime": times.count("RuntimeFailedConfig") + sum(t == 1e20 for t in times),
        "constraints": times.count("InvalidConfig"),
    }
    assert records.levels == {k: tuple(v) for k, v in document["tune_params"].items()}
    first = next(iter(document["cache"].values()))
    assert [records.columns[k][0] for k in records.levels] == [
        first[k] for k in document["tune_params"]
    ]
    assert records.metadata["device_name"] == "Test GPU"


def test_plain_json_t4_and_open_cache_read_the_same_rows(tmp_path):
    document = small_cache()
    plain = read_tuning_file(write_json(tmp_path / "c.json", document))
    t4 = read_tuning_file(write_json(tmp_path / "t.json", as_t4(document)))
    text = json.dumps(document)  # `cache` is the last key: the text ends with "}}}"
    (tmp_path / "open.json").write_text(text[:-2] + ",")  # as an interrupted run leaves it
    opened = read_tuning_file(tmp_path / "open.json")
    for other in (t4, opened):
        assert len(other) == len(plain)
        assert _kinds(other) == _kinds(plain)
        np.testing.assert_array_equal(other.values, plain.values)
    assert t4.format == "t4" and t4.levels["block_size_x"] == (32, 64, 128, 256)
    assert t4.samples[0] == plain.samples[0]


def test_rows_outside_the_levels_or_repeated_are_reported(tmp_path):
    document = small_cache()
    document["cache"]["odd"] = {**next(iter(document["cache"].values())), "block_size_x": 48}
    records = read_tuning_file(write_json(tmp_path / "c.json", document))
    assert len(records) == cache_counts(document)["rows"] - 1
    ((count, examples),) = records.skipped.values()
    assert count == 1 and examples[0]["block_size_x"] == 48
    t4 = as_t4(small_cache())
    t4["results"].append(t4["results"][0])
    records = read_tuning_file(write_json(tmp_path / "t.json", t4))
    assert len(records) == len(t4["results"]) - 1
    assert "repeats" in next(iter(records.skipped))


@pytest.mark.parametrize(
    ("content", "objective", "message"),
    [
        (b'{"cache": {"1": {"a": 1, ', None, "not valid JSON"),
        (b"a,b\n1,2\n", None, "not valid JSON"),
        (b"[1, 2]", None, "not an object"),
        (json.dumps({"tune_params": {"a": [1]}}).encode(), None, "no `cache` key"),
        (json.dumps(small_cache()).encode(), "GFLOPS", "no record holds the objective 'GFLOPS'"),
        (json.dumps(as_t4(small_cache())).encode(), "energy", "'energy'"),
    ],
)
def test_bad_files_raise_a_config_error_naming_the_problem(tmp_path, content, objective, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        read_tuning_file(path, objective)


def test_truncated_gzip_is_named(tmp_path):
    blob = gzip.compress(json.dumps(small_cache()).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ConfigError, match="cut.json.gz: cannot read it"):
        read_tuning_file(path)
