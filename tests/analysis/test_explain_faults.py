"""Faults a new user met with `explain`: a constant objective, too few trials for the
number of parameters, and a run whose space only Python can rebuild (probe 5: A4, D)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from gpautotune.analysis.explain import (
    MIN_POINTS_PER_PARAMETER,
    explain_run,
    fit_run_surrogate,
    load_run,
    run_space,
)
from gpautotune.cli import app
from gpautotune.exceptions import ConfigError
from gpautotune.problems.function import FunctionProblem
from gpautotune.sensitivity import sobol_indices
from gpautotune.space import IntRange, PowerOfTwo, Space
from gpautotune.tuner import tune

runner = CliRunner()
FAST = {"n": 16, "paths": 2, "bootstrap": 5}
INDICES = ["S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high", "S1_mean_fn", "ST_mean_fn"]


def _space() -> Space:
    return Space(
        [IntRange("a", 1, 8), PowerOfTwo("b", 1, 64), IntRange("c", 1, 4)],
        constraints=["a * b <= 256"],
    )


def _f(config: dict) -> float:
    return (config["a"] - 3.0) ** 2 + math.log2(config["b"]) + 1.0


def _journal(tmp_path, objective, budget: int, space: Space | None = None, **kw) -> str:
    db = str(tmp_path / "runs.db")
    problem = FunctionProblem(objective, space or _space(), **kw)
    tune(problem, "random", budget, storage=db, seed=0)
    return db


def _our_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, UserWarning) and "run 1" in str(w.message)
    ]


def test_a_constant_objective_gives_zero_indices_and_says_so(tmp_path):
    db = _journal(tmp_path, lambda c: 1.0, 8)
    with pytest.warns(UserWarning, match=r"constant over them \(zero variance\)"):
        table, png = explain_run(db, out_dir=tmp_path / "out", **FAST)
    assert (table[INDICES].to_numpy() == 0.0).all()  # not the GP prior's paths (up to 0.54)
    assert table.attrs["constant"] and table.attrs["method"].startswith("constant objective")
    assert png is not None and png.is_file()
    # the same as sobol_indices of the constant function
    exact = sobol_indices(lambda index: np.ones(len(index)), _space(), n=16).table
    assert (exact[["S1", "ST", "ST_high"]].to_numpy() == 0.0).all()
    record, trials = load_run(db)
    with pytest.warns(UserWarning, match="describes only its prior"):
        fit_run_surrogate(record, run_space(record), trials)


def test_a_constant_objective_is_one_warning_line_in_the_cli(tmp_path):
    db = _journal(tmp_path, lambda c: 2.5, 8)
    out = runner.invoke(app, ["explain", db, "--paths", "2", "--out", str(tmp_path / "x")])
    assert out.exit_code == 0, out.output
    lines = [x for x in out.output.splitlines() if x.startswith("warning:")]
    assert len(lines) == 1 and "all measured 2.5" in lines[0], out.output
    assert "every Sobol index is 0" in " ".join(out.output.split())
    assert "ST" not in out.output  # no table of zeros under the warning


@pytest.mark.parametrize("budget", [2, 4])
def test_too_few_trials_for_the_parameters_warn(tmp_path, budget):
    db = _journal(tmp_path, _f, budget)
    with pytest.warns(UserWarning, match=f"has {budget} distinct successful configurations for 3"):
        table, _ = explain_run(db, **FAST)
    assert not table.attrs["constant"]
    record, trials = load_run(db)
    with pytest.warns(UserWarning, match=f"fewer than {MIN_POINTS_PER_PARAMETER} per parameter"):
        fit_run_surrogate(record, run_space(record), trials)
    out = runner.invoke(app, ["explain", db, "--paths", "2", "--out", str(tmp_path / "x")])
    assert out.exit_code == 0, out.output
    lines = [x for x in out.output.splitlines() if x.startswith("warning:")]
    assert len(lines) == 1 and "per parameter, 12)" in lines[0], out.output


def test_an_adequately_sampled_run_explains_without_a_warning(tmp_path):
    db = _journal(tmp_path, _f, MIN_POINTS_PER_PARAMETER * 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table, _ = explain_run(db, **FAST)
    assert _our_warnings(caught) == []
    assert not table.attrs["constant"] and table["ST"].max() > 0.1


def _python_space() -> Space:
    def small(columns):
        return columns["a"] * columns["b"] <= 64

    return Space(
        [IntRange("a", 1, 8), PowerOfTwo("b", 1, 16)],
        constraints=[small],
        derived={"size": lambda columns: columns["a"] * columns["b"]},
    )


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        (None, "the Space the run searched"),
        ("quantization", "result.problem.space, with result the PolicyResult search_policy"),
    ],
)
def test_a_python_only_space_says_how_to_explain_it_from_python(tmp_path, name, hint):
    space = _python_space()
    db = _journal(tmp_path, lambda c: c["a"] + c["b"], 3, space, name=name)
    record, _ = load_run(db)
    with pytest.raises(ConfigError) as caught:
        run_space(record)
    message = str(caught.value)
    assert "explain_run(db, run_id=1, space=...)" in message and hint in message
    assert "derived quantity 'size'" in message and "constraint 'small'" in message
    assert "cannot parse" not in message and "unknown problem" not in message
    assert "cannot parse" in str(caught.value.__cause__)  # the detail is kept
    out = runner.invoke(app, ["explain", db, "--paths", "2"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output
    assert "explain_run(" in out.output and "invalid syntax" not in out.output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 3 trials for 2 parameters
        table, _ = explain_run(db, space=space, **FAST)
    assert sorted(table["parameter"]) == ["a", "b"]
