"""Input files a YAML file names: found from the working directory, else beside the file.

The repository's files (``source: configs/kernels/matmul.cl``, run from its root) keep
working unchanged; a compose-style file (``source: mykernel.cl`` beside the YAML) works
from any folder; a name found in neither place is refused naming both; outputs
(``storage``) and Python calls stay relative to the working directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.comparison import expand, load_comparison
from gpautotune.config import build_problem, build_strategy, load_config
from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems.kernel import c_kernel
from gpautotune.tuner import run_spec

ROOT = Path(__file__).resolve().parents[1]
C_SOURCE = (
    "void scale(float *y, const float *x, int n) { for (int i = 0; i < n; i++) y[i] = U * x[i]; }\n"
)
KERNEL = {
    "name": "c-kernel",
    "kernel": "scale",
    "sizes": {"n": 8},
    "arguments": [
        {"name": "y", "zeros": "n"},
        {"name": "x", "random": "n"},
        {"name": "n", "value": "n", "dtype": "int32"},
    ],
    "tune_params": {"U": [1, 2]},
}
PARAMETERS = [{"name": "x", "kind": "int", "low": 1, "high": 4}]
TABLE = "x,time\n1,4.0\n2,3.0\n3,2.0\n4,1.0\n"


@pytest.fixture
def folders(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """``(project, elsewhere)``: a folder for the YAML files and the working directory."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return project, elsewhere


def _tuning(folder: Path, problem: dict, **more) -> Path:
    path = folder / "tune.yaml"
    spec = {"problem": problem, "strategy": {"name": "random"}, "budget": 2, "seed": 1, **more}
    path.write_text(yaml.safe_dump(spec))
    return path


def _comparison(folder: Path, problems: list[dict]) -> Path:
    path = folder / "compare.yaml"
    spec = {
        "problems": problems,
        "strategies": [{"name": "random"}],
        "repetitions": 1,
        "budget": 2,
        "storage": "results/c.db",
    }
    path.write_text(yaml.safe_dump(spec))
    return path


def _replay(data: str) -> dict:
    return {"name": "replay", "data": data, "objective": "time", "parameters": PARAMETERS}


def _t4(path: Path) -> Path:
    results = [
        {
            "configuration": {"block_size_x": b},
            "invalidity": "correct",
            "measurements": [{"name": "time", "value": b / 32, "unit": "ms"}],
            "objectives": ["time"],
        }
        for b in (32, 64, 128)
    ]
    path.write_text(json.dumps({"results": results, "schema_version": "1.0.0"}))
    return path


# ------------------------------------------------------------------ kernels (tuning files)


def test_a_kernel_source_beside_the_yaml_is_found_from_another_folder(folders):
    project, _ = folders
    (project / "k.c").write_text(C_SOURCE)
    config = load_config(_tuning(project, {**KERNEL, "source": "k.c"}))
    assert config.problem.options["source"] == str((project / "k.c").resolve())
    problem = build_problem(config.problem)
    assert problem.describe()["source"] == str((project / "k.c").resolve())


def test_an_override_of_the_problem_name_keeps_its_paths_found(folders):
    project, _ = folders
    (project / "k.c").write_text(C_SOURCE)
    path = _tuning(project, {**KERNEL, "source": "k.c"})
    config = load_config(path, ["problem.name=c-kernel"])
    assert config.problem.options["source"] == str((project / "k.c").resolve())


def test_the_working_directory_wins_and_its_path_is_kept_as_written(folders):
    project, elsewhere = folders
    (project / "k.c").write_text(C_SOURCE.replace("U * x[i]", "x[i] * U"))
    (elsewhere / "k.c").write_text(C_SOURCE)
    config = load_config(_tuning(project, {**KERNEL, "source": "k.c"}))
    assert config.problem.options["source"] == "k.c"  # untouched: the same run key as before
    problem = build_problem(config.problem)
    assert problem.describe()["source"] == str((elsewhere / "k.c").resolve())
    assert "U * x[i]" in problem.spec.source


def test_a_missing_source_names_both_places(folders):
    project, elsewhere = folders
    with pytest.raises(DataNotFoundError) as info:
        load_config(_tuning(project, {**KERNEL, "source": "nope.c"}))
    message = str(info.value)
    assert message.startswith("source: no file 'nope.c' in the working directory")
    assert str(elsewhere.resolve()) in message and str(project.resolve()) in message
    assert "tune.yaml" in message


def test_a_missing_source_in_the_yaml_folder_itself_names_it_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError, match=r"^source: no file 'nope.c'") as info:
        load_config(_tuning(tmp_path, {**KERNEL, "source": "nope.c"}))
    assert str(info.value).count(str(tmp_path.resolve())) == 1


def test_kernel_code_is_no_path(folders):
    project, _ = folders
    one_line = C_SOURCE.strip()
    for source in (C_SOURCE, one_line):
        config = load_config(_tuning(project, {**KERNEL, "source": source}))
        assert config.problem.options["source"] == source


def test_argument_and_answer_files_beside_the_yaml(folders):
    project, _ = folders
    (project / "k.c").write_text(C_SOURCE)
    np.save(project / "x.npy", np.arange(8, dtype=np.float32))
    np.save(project / "y.npy", np.arange(8, dtype=np.float32))
    arguments = [dict(a) for a in KERNEL["arguments"]]
    arguments[1] = {"name": "x", "file": "x.npy"}
    problem = {
        **KERNEL,
        "source": "k.c",
        "arguments": arguments,
        "answer": {"y": {"file": "y.npy"}},
    }
    options = load_config(_tuning(project, problem)).problem.options
    assert options["arguments"][1]["file"] == str((project / "x.npy").resolve())
    assert options["arguments"][0] == {"name": "y", "zeros": "n"}
    assert options["answer"] == {"y": {"file": str((project / "y.npy").resolve())}}
    answer = {"y": {"file": "missing.npy"}}
    with pytest.raises(DataNotFoundError, match=r"^answer\.y\.file: no file 'missing.npy'"):
        load_config(_tuning(project, {**problem, "answer": answer}))
    arguments[1] = {"name": "x", "file": "missing.npy"}
    with pytest.raises(DataNotFoundError, match=r"^arguments\.1\.file: no file 'missing.npy'"):
        load_config(_tuning(project, {**problem, "arguments": arguments}))


def test_a_resolved_source_keeps_the_run_key(folders):
    """A kernel's settings hold its source's absolute path and digest: the file found
    beside the YAML gives the key a run started from the YAML's folder has."""
    project, _ = folders
    (project / "k.c").write_text(C_SOURCE)
    config = load_config(_tuning(project, {**KERNEL, "source": "k.c"}))
    beside = build_problem(config.problem)
    strategy = build_strategy(config.strategy, beside, config.seed)
    key = run_spec(beside, strategy, seed=1, label=None).key
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        here = build_problem(load_config("tune.yaml").problem)
        assert load_config("tune.yaml").problem.options["source"] == "k.c"
    assert run_spec(here, strategy, seed=1, label=None).key == key


def test_the_repository_files_are_passed_on_unchanged(monkeypatch):
    monkeypatch.chdir(ROOT)
    for name in ("matmul", "transpose", "vadd"):
        path = Path("configs/kernels") / f"{name}.yaml"
        written = yaml.safe_load(path.read_text())["problem"]
        assert dict(load_config(path).problem.options) == {
            k: v for k, v in written.items() if k != "name"
        }


def test_python_calls_look_in_the_working_directory_only(folders):
    project, _ = folders
    (project / "k.c").write_text(C_SOURCE)
    options = {k: v for k, v in KERNEL.items() if k != "name"}
    with pytest.raises(ConfigError, match="relative to the working directory"):
        c_kernel(source="k.c", **options)


# ------------------------------------------------------- tables, warm starts, overrides


def test_a_replay_table_beside_a_tuning_file_runs_from_another_folder(folders):
    project, elsewhere = folders
    (project / "t.csv").write_text(TABLE)
    path = _tuning(project, _replay("t.csv"), storage="j.db")
    out = CliRunner().invoke(app, ["tune", str(path)])
    assert out.exit_code == 0, out.output
    assert (elsewhere / "j.db").is_file() and not (project / "j.db").exists()  # an output


def test_a_wrapped_problems_table_beside_the_file_is_found(folders):
    project, _ = folders
    (project / "t.csv").write_text(TABLE)
    config = load_config(_tuning(project, {"name": "paced", "problem": _replay("t.csv")}))
    assert config.problem.options["problem"]["data"] == str((project / "t.csv").resolve())
    with pytest.raises(DataNotFoundError, match=r"^problem\.data: no file 'u\.csv'"):
        load_config(_tuning(project, {"name": "paced", "problem": _replay("u.csv")}))


def test_warm_start_beside_the_file_but_a_command_line_path_from_the_working_directory(
    folders,
):
    project, elsewhere = folders
    (project / "t.csv").write_text(TABLE)
    (project / "w.csv").write_text("x,value\n2,3.0\n")
    config = load_config(_tuning(project, _replay("t.csv"), warm_start="w.csv"))
    assert config.warm_start == str((project / "w.csv").resolve())
    assert config.storage_path() == str(Path("results") / "replay-random.db")
    with pytest.raises(DataNotFoundError, match=r"^warm_start: no file 'v.csv'"):
        load_config(_tuning(project, _replay("t.csv"), warm_start="v.csv"))
    # --set values are the command line's: as given, and the file's they replace unread
    overridden = load_config(project / "tune.yaml", ["warm_start=w.csv", "problem.data=t.csv"])
    assert overridden.warm_start == "w.csv" and overridden.problem.options["data"] == "t.csv"


# ----------------------------------------------------------------------- comparison files


def test_table_problems_beside_a_comparison_file(folders):
    project, _ = folders
    (project / "t.csv").write_text(TABLE)
    _t4(project / "cache.json")
    path = _comparison(project, [_replay("t.csv"), {"name": "kt-cache", "path": "cache.json"}])
    config = load_comparison(path)
    assert config.problems[0].options["data"] == str((project / "t.csv").resolve())
    assert config.problems[1].options["path"] == str((project / "cache.json").resolve())
    assert config.storage == "results/c.db"  # the journal stays where the command runs
    problems = [build_problem(s, factory_names=True) for s in config.problems]
    repetitions = list(expand(config, problems))
    with pytest.MonkeyPatch.context() as patch:  # a worker elsewhere gets the found paths
        patch.chdir(project.parent)
        for rep in repetitions:
            assert build_problem(rep.problem, factory_names=True).optimum == 1.0


def test_a_single_problem_comparison_and_the_error_naming_both_places(folders):
    project, elsewhere = folders
    (project / "t.csv").write_text(TABLE)
    path = project / "single.yaml"
    spec = {"problem": _replay("t.csv"), "strategies": [{"name": "random"}], "repetitions": 1}
    path.write_text(yaml.safe_dump({**spec, "budget": 2, "storage": "c.db"}))
    assert load_comparison(path).problems[0].options["data"] == str((project / "t.csv").resolve())
    bad = _comparison(project, [{"name": "booth"}, _replay("nope.csv")])
    with pytest.raises(DataNotFoundError) as info:
        load_comparison(bad)
    message = str(info.value)
    assert message.startswith("problems.1.data: no file 'nope.csv' in the working directory")
    assert str(elsewhere.resolve()) in message and str(project.resolve()) in message


def test_a_kt_cache_path_still_searches_the_data_folders(folders, monkeypatch):
    project, elsewhere = folders
    data = elsewhere / "data"
    (data / "caches").mkdir(parents=True)
    _t4(data / "caches" / "a.json")
    monkeypatch.setenv("GPAUTOTUNE_DATA", str(data))
    path = _comparison(project, [{"name": "kt-cache", "path": "caches/a.json"}])
    assert load_comparison(path).problems[0].options["path"] == "caches/a.json"
    # a table a shipped file names may be made later: the file loads, the build says
    missing = load_comparison(_comparison(project, [{"name": "kt-cache", "path": "b.json"}]))
    assert missing.problems[0].options["path"] == "b.json"
    with pytest.raises(DataNotFoundError, match=r"cannot find 'b.json'.*problem\.path=PATH"):
        build_problem(missing.problems[0], factory_names=True)
