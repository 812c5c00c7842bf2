"""GPR as the seeds ran it: the kriging model, batches from one fit, the gpr-seeds preset."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems.synthetic import BoothProblem
from gpautotune.space import Categorical, PowerOfTwo, Space
from gpautotune.strategies import make_strategy
from gpautotune.tuner import tune

KRIGING = {"model": "kriging", "noise": 1e-12, "n_init": 7, "stall": None}


def test_gpr_seeds_defaults_are_the_seeds_options() -> None:
    settings = make_strategy("gpr-seeds", BoothProblem().space).settings()
    assert {k: settings[k] for k in ("model", "refit_every", "acquisition", "kappa")} == {
        "model": "kriging",
        "refit_every": 6,
        "acquisition": "lcb",
        "kappa": 0.3,
    }
    assert settings["n_init"] == 24 and settings["init_method"] == "random"
    assert settings["noise"] == 1e-3 and settings["noise_units"] == "objective"
    assert settings["log_transform"] is False
    assert settings["extra_inputs"] == [] and "stall" not in settings


#: The options that name the default GPR's runs in stored journals: a new option at its
#: default must stay out of the key (``KEY_OMITS_DEFAULTS``), or every stored run of the
#: default would be made again on resuming.
DEFAULT_KEY = sorted(
    "acquisition backlog derived_inputs escape exhaustive_limit extra_inputs failed_value"
    " feasibility fresh_every init_method kappa kernel lengthscale_max lengthscale_prior"
    " log_transform loo_after model_choice n_best n_init noise output_warp perturbations"
    " radius restarts sample_size stall stall_kappa trend".split()
)


def test_the_default_gpr_keeps_its_run_key() -> None:
    settings = make_strategy("gpr", BoothProblem().space).settings()
    assert sorted(settings) == DEFAULT_KEY
    warm = make_strategy("gpr", BoothProblem().space, max_iter_warm=30).settings()
    assert warm["max_iter_warm"] == 30 and "max_iter" not in warm
    kriging = make_strategy("gpr", BoothProblem().space, **KRIGING).settings()
    assert kriging["model"] == "kriging"


def test_kriging_needs_a_fixed_nugget() -> None:
    with pytest.raises(ConfigError, match="nugget"):
        make_strategy("gpr", BoothProblem().space, model="kriging")


def test_a_nugget_in_the_objectives_units_needs_the_kriging_model() -> None:
    with pytest.raises(ConfigError, match="noise_units"):
        make_strategy("gpr", BoothProblem().space, noise=1e-3, noise_units="objective")
    gp = make_strategy("gpr", BoothProblem().space).settings()
    assert "noise_units" not in gp  # at its default: out of the run key


@pytest.mark.slow
def test_gpr_seeds_ends_where_the_thesis_runs_end(laplacian) -> None:
    """Table 11.3's GPR runs end at elements_number = y_component_number in {5, 6} with
    vector_length 1 (the trend's attractors, not the 1.21 basin at elements_number 24)."""
    trend = (
        "y_component_number + 1/y_component_number + vector_length + lws_y + 1/lws_y"
        " + load_overlap + temporary_size + elements_number + 1/elements_number"
        " + threads_number + 1/threads_number"
    )
    for seed in (0, 1):
        result = tune(laplacian, "gpr-seeds", 120, seed=seed, strategy_options={"trend": trend})
        best = result.best_config
        assert best["elements_number"] == best["y_component_number"] in (5, 6)
        assert best["vector_length"] == 1
        assert result.best_value / laplacian.optimum < 1.11


def test_refit_every_measures_the_best_of_one_scoring_in_order() -> None:
    result = tune(
        BoothProblem(), "gpr", 7 + 12, seed=2, strategy_options={**KRIGING, "refit_every": 6}
    )
    model = result.trials[7:]
    assert [t.info["n_train"] for t in model] == [7] * 6 + [13] * 6
    for batch in (model[:6], model[6:]):
        scores = [t.info["best_acq"] for t in batch]
        assert scores == sorted(scores, reverse=True)  # the ranking of one fit, best first
    assert len({tuple(t.config.values()) for t in result.trials}) == 19


def test_a_resumed_run_finishes_the_interrupted_batch() -> None:
    options = {**KRIGING, "refit_every": 6}
    whole = tune(BoothProblem(), "gpr", 7 + 12, seed=4, strategy_options=options).trials
    resumed = make_strategy("gpr", BoothProblem().space, seed=4, **options)
    resumed.tell(whole[:10])  # killed after 3 picks of the first batch
    assert [p.config for p in resumed.ask(3)] == [t.config for t in whole[10:13]]
    resumed.tell(whole[10:13])
    assert [p.config for p in resumed.ask(6)] == [t.config for t in whole[13:19]]


def test_kriging_batches_of_ask_condition_each_pick_on_the_previous_ones() -> None:
    strategy = make_strategy("gpr", BoothProblem().space, seed=0, **KRIGING)
    result = tune(BoothProblem(), strategy, 7 + 6, seed=0, batch_size=3)
    picks = result.trials[7:]
    assert len({tuple(t.config.values()) for t in picks}) == 6
    assert [t.info["n_train"] for t in picks] == [7, 7, 7, 10, 10, 10]


def test_value_inputs_scale_the_levels_linearly() -> None:
    space = Space([PowerOfTwo("p", 1, 8), Categorical("c", ("a", "b", "c"))])
    index = np.array([[0, 0], [1, 1], [2, 2], [3, 0]])
    values = make_strategy("gpr", space, inputs="values").features(index)
    encoded = make_strategy("gpr", space).features(index)
    assert values[:, 0] == pytest.approx([0, 1 / 7, 3 / 7, 1])
    assert encoded[:, 0] == pytest.approx([0, 1 / 3, 2 / 3, 1])  # log2 positions
    assert values[:, 1] == pytest.approx(encoded[:, 1])  # categories keep their encoding


def test_a_resumed_kriging_run_rebuilds_its_backlog_from_the_stored_fits(tmp_path) -> None:
    """Killed after 22 trials (fits stored at 7, 13 and 19 trials), a run whose pool is
    sampled (so that it has a backlog) restores the stored kriging fits and goes on as
    the uninterrupted run did."""

    def run(storage: Path) -> list[dict]:
        options = {"exhaustive_limit": 0, "n_init": 7, "sample_size": 4, "perturbations": 2}
        result = tune(
            BoothProblem(), "gpr-seeds", 28, seed=5, strategy_options=options, storage=storage
        )
        return [t.config for t in result.trials]

    whole = run(tmp_path / "whole.db")
    killed = tmp_path / "killed.db"
    with sqlite3.connect(tmp_path / "whole.db") as src, sqlite3.connect(killed) as dst:
        src.backup(dst)
        dst.execute("DELETE FROM trials WHERE number >= 22")
    assert run(killed) == whole
