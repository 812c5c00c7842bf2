import numpy as np
import pytest

from gpautotune.acquisition import CandidatePool, PoolSettings
from gpautotune.exceptions import ConfigError
from gpautotune.problems.synthetic import ScreeningProblem
from gpautotune.strategies import make_strategy
from gpautotune.strategies._screening import decide
from gpautotune.tuner import tune


def test_decide_fixes_below_the_threshold_and_always_leaves_one_free():
    best = {"a": 1, "b": 2, "c": 3}
    assert decide({"a": 0.5, "b": 0.001, "c": 0.02}, best, 0.05) == {"b": 2, "c": 3}
    assert decide({"a": 0.01, "b": 0.001, "c": 0.02}, best, 0.05) == {"a": 1, "b": 2}


@pytest.mark.parametrize("exhaustive_limit", [100_000, 10])
def test_pool_with_fixed_parameters_only_offers_the_restricted_subspace(exhaustive_limit):
    space = ScreeningProblem(levels=3).space
    pool = CandidatePool(
        space,
        PoolSettings(exhaustive_limit=exhaustive_limit, sample_size=200),
        0,
        fixed={"x2": 1.0, "x4": -1.0},
    )
    rows, scores, _ = pool.propose(
        0, lambda r: np.zeros(len(r), dtype=bool), lambda r: -r.sum(axis=1)
    )
    configs = space.to_configs(rows)
    assert len(rows) > 0 and all(c["x2"] == 1.0 and c["x4"] == -1.0 for c in configs)
    assert len(space.unique_rows(rows)) == len(rows)
    if pool.exhaustive:
        assert len(rows) == 3**6


def test_screen_threshold_is_checked():
    with pytest.raises(ConfigError, match="screen"):
        make_strategy("gpr", ScreeningProblem().space, screen=1.5)
    assert (
        "screen" not in make_strategy("gpr", ScreeningProblem().space).settings()
    )  # old run keys unchanged


@pytest.mark.slow
def test_screen_then_tune_fixes_dummies_records_it_and_resumes_identically(tmp_path):
    problem, db = ScreeningProblem(), tmp_path / "runs.db"
    options = {"n_init": 32, "restarts": 0, "screen": 0.02}
    first = tune(problem, "gpr", 33, storage=db, seed=0, strategy_options=options)
    info = first.trials[32].info
    fixed = info["screened"]
    assert fixed and set(fixed) <= {"x2", "x4", "x6"}  # the factors absent from the objective
    assert set(info["screen_st_high"]) == set(problem.space.names)
    assert all(info["screen_st_high"][k] < 0.02 for k in fixed)
    resumed = tune(
        problem, "gpr", 34, storage=db, seed=0, strategy_options=options
    )  # a fresh strategy
    assert resumed.run_id == first.run_id
    for trial in resumed.trials[33:]:
        assert trial.info["screened"] == fixed
        assert all(trial.config[k] == v for k, v in fixed.items())
