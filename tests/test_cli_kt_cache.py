"""The command line on replayed Kernel Tuner caches and T4 files."""

from __future__ import annotations

import gzip
import json

import jsonschema
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.storage._t4 import t4_schema
from tests.storage.kt_files import cache_counts, small_cache, write_json

runner = CliRunner()


@pytest.fixture
def cache(tmp_path):
    document = small_cache()
    return document, write_json(tmp_path / "cache.json.gz", document, gz=True)


def _yaml(tmp_path, problem: str, budget: int = 25) -> str:
    path = tmp_path / "kt.yaml"
    path.write_text(
        f"problem: {problem}\nstrategy: {{name: random}}\nbudget: {budget}\nseed: 4\n"
        f"storage: {tmp_path / 'kt.db'}\n"
    )
    return str(path)


def test_space_prints_raw_size_valid_and_failed_counts(cache, tmp_path):
    document, path = cache
    counts = cache_counts(document)
    for target in (str(path), _yaml(tmp_path, f"{{name: kt-cache, path: {path}}}")):
        out = runner.invoke(app, ["space", target])
        assert out.exit_code == 0, out.output
        assert f"raw size: {counts['raw']}" in out.output
        assert f"valid: {counts['rows']} (exact" in out.output
        assert f"failed: {counts['failed']} of the valid rows" in out.output
        assert "filter_width=15" in out.output


def test_tune_show_and_t4_export(cache, tmp_path):
    _, path = cache
    config = _yaml(tmp_path, f"{{name: kt-cache, path: {path}, label: small}}")
    out = runner.invoke(app, ["tune", config])
    assert out.exit_code == 0, out.output
    assert "25 evaluations" in out.output and "slowdown" in out.output
    out = runner.invoke(app, ["show", str(tmp_path / "kt.db")])
    assert out.exit_code == 0 and "small" in out.output and "random" in out.output
    target = tmp_path / "t4.json"
    out = runner.invoke(app, ["export", str(tmp_path / "kt.db"), "--t4", str(target), "--validate"])
    assert out.exit_code == 0, out.output
    document = json.loads(target.read_text())
    jsonschema.validate(document, t4_schema())
    assert len(document["results"]) == 25


def _truncated(tmp_path):
    blob = gzip.compress(json.dumps(small_cache()).encode())
    (tmp_path / "cut.json.gz").write_bytes(blob[: len(blob) // 3])
    return "{name: kt-cache, path: %s}" % (tmp_path / "cut.json.gz")


def _text(tmp_path):
    (tmp_path / "notes.json").write_text("block_size_x,time\n32,1.5\n")
    return "{name: kt-cache, path: %s}" % (tmp_path / "notes.json")


def _no_cache_key(tmp_path):
    document = {k: v for k, v in small_cache().items() if k != "cache"}
    write_json(tmp_path / "nocache.json", document)
    return "{name: kt-cache, path: %s}" % (tmp_path / "nocache.json")


def _unknown_objective(tmp_path):
    write_json(tmp_path / "c.json", small_cache())
    return "{name: kt-cache, path: %s, objective: GFLOPS}" % (tmp_path / "c.json")


def _unknown_restriction_name(tmp_path):
    write_json(tmp_path / "c.json", small_cache())
    return "{name: kt-cache, path: %s, restrictions: ['block_size_z * 2 < 64']}" % (
        tmp_path / "c.json"
    )


def _csv_replay_of_json(tmp_path):
    write_json(tmp_path / "c.json", small_cache())
    return (
        "{name: replay, data: %s, objective: time, parameters: [{kind: ordinal, "
        "name: block_size_x, levels: [32, 64]}]}" % (tmp_path / "c.json")
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_truncated, "cut.json.gz: cannot read it"),
        (_text, "not valid JSON"),
        (_no_cache_key, "no `cache` key"),
        (_unknown_objective, "no record holds the objective 'GFLOPS'"),
        (_unknown_restriction_name, "unknown name 'block_size_z'"),
        (_csv_replay_of_json, "name: kt-cache"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, make, message):
    result = runner.invoke(app, ["tune", _yaml(tmp_path, make(tmp_path))])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert len(result.output) < 600


def test_explain_rebuilds_a_compared_tables_space_from_the_catalog(cache, tmp_path):
    """A replayed table's run stores the table's name as its problem, which the registry
    does not know, and a space with a row predicate its text cannot rebuild: `explain`
    rebuilds it from the section the comparison recorded (it once asked for space=)."""
    from gpautotune.analysis.explain import catalog_section, run_space
    from gpautotune.problems.kt_cache import kt_cache_problem
    from gpautotune.storage import Journal
    from gpautotune.tuner import tune

    _, path = cache
    problem, db = kt_cache_problem(str(path), label="small"), tmp_path / "c.db"
    tune(problem, "gpr", 14, seed=1, storage=str(db))
    with Journal(str(db)) as journal:
        record = journal.runs()[-1]
        assert catalog_section(db, record) is None  # no catalog yet: the stored path serves
        assert run_space(record).describe() == problem.space.describe()
        section = {"name": "kt-cache", "path": str(path), "label": "small"}
        journal.record_problem(problem.name, problem.describe(), section, problem.optimum)
    assert catalog_section(db, record) == section
    assert run_space(record, section).describe() == problem.space.describe()
    out = runner.invoke(app, ["explain", str(db), "--paths", "2", "--out", str(tmp_path / "x")])
    assert out.exit_code == 0, out.output
    assert "chart:" in out.output and list((tmp_path / "x").glob("*.csv"))


def test_space_counts_the_records_a_cache_leaves_out(tmp_path):
    document = small_cache()
    first = next(iter(document["cache"].values()))
    document["cache"]["odd"] = {**first, "block_size_x": 48}  # not a level
    document["cache"]["again"] = dict(first)  # a repeat
    path = write_json(tmp_path / "c.json", document)
    out = runner.invoke(app, ["space", str(path)])
    assert out.exit_code == 0, out.output
    assert "warning: 2 of" in out.output
    text = " ".join(out.output.split())  # as one line, however the console wraps it
    assert "records left out of the file: 2 (" in text
    assert "are not levels of tune_params: 1" in text and "the first is kept): 1" in text


def test_space_of_a_bare_cache_refuses_set_and_names_the_yaml_way(cache):
    _, path = cache
    out = runner.invoke(app, ["space", str(path), "--set", "problem.direction=max"])
    assert out.exit_code == 2, out.output
    assert "--set" in out.output and "YAML" in out.output and "name: kt-cache" in out.output
    assert len(out.output.strip().splitlines()) == 1
