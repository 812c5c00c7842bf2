"""Behaviour of each baseline beyond the shared contract."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import ConstrainedBitsProblem, Measurement, Problem, ScreeningProblem
from gpautotune.space import Categorical, IntRange, Ordinal, Space
from gpautotune.strategies import make_strategy
from gpautotune.trial import Origin, Trial
from gpautotune.tuner import TuningRun, tune

LAPLACIAN_MODEL = (
    "y_component_number + 1/y_component_number + vector_length + lws_y + 1/lws_y + load_overlap"
    " + temporary_size + elements_number + 1/elements_number + threads_number + 1/threads_number"
)
SEED_000_SCHEDULE = (
    "vector_length + lws_y",
    "y_component_number",
    "elements_number",
    "threads_number + 1/threads_number",
)


class Bowl(Problem):
    """A separable convex bowl on a 12x12x12 grid with a cut corner; optimum 0 at (3, 8, 5)."""

    name = "bowl"

    def __init__(self) -> None:
        self.space = Space([IntRange(n, 0, 11) for n in "xyz"], constraints=["x + y + z <= 30"])
        self.optimum = 0.0

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        return Measurement.success(
            float((config["x"] - 3) ** 2 + (config["y"] - 8) ** 2 + 2 * (config["z"] - 5) ** 2)
        )


def _run_strategy(problem: Problem, name: str, budget: int, seed: int = 0, **options: Any):
    strategy = make_strategy(name, problem.space, seed=seed, **options)
    result = tune(problem, strategy, budget, seed=seed)
    return strategy, result


@pytest.fixture(scope="module")
def laplacian():
    from gpautotune.problems import laplacian_replay

    return laplacian_replay()


# ----------------------------------------------------------------------- lhs
def test_lhs_measures_about_its_design_and_stops(laplacian) -> None:
    strategy, result = _run_strategy(laplacian, "lhs", 200, samples=40)
    assert 20 <= result.used <= 60
    assert 0.05 < strategy.valid_fraction() < 0.3  # most rounded points violate the predicates
    assert strategy.settings() == {"samples": 40}
    _, capped = _run_strategy(laplacian, "lhs", 30, samples=40)
    assert capped.used == 30


def test_lhs_rejects_a_bad_size() -> None:
    with pytest.raises(ConfigError):
        make_strategy("lhs", Bowl().space, samples=0)


# -------------------------------------------------------------------- greedy
def test_greedy_descends_to_the_bottom_of_a_convex_bowl_and_stops() -> None:
    for seed in range(3):
        _, result = _run_strategy(Bowl(), "greedy", 500, seed=seed)
        assert result.best_value == 0.0 and result.used < 200
        assert result.trials[0].info["phase"] == "start"


def test_greedy_restart_uses_the_budget_with_several_starts() -> None:
    _, result = _run_strategy(Bowl(), "greedy-restart", 300)
    assert result.used == 300
    assert max(t.info["start"] for t in result.trials) >= 2


class Slope(Problem):
    """A 10x10 grid whose steepest moves are along y: f = (x - 9)^2 + 100 (y - 9)^2."""

    name = "slope"

    def __init__(self) -> None:
        self.space = Space([IntRange("x", 0, 9), IntRange("y", 0, 9)])

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        return Measurement.success(float((config["x"] - 9) ** 2 + 100 * (config["y"] - 9) ** 2))


def test_greedy_stops_after_a_move_along_an_ignored_parameter() -> None:
    for seed in range(6):
        plain, full = _run_strategy(Slope(), "greedy", 200, seed=seed)
        start = full.trials[0].config
        if start["y"] == 9:
            continue
        assert full.best_config == {"x": 9, "y": 9}
        seeds_gs, short = _run_strategy(Slope(), "greedy", 200, seed=seed, moved_ignores=["y"])
        # the first step moves along y alone, which ends the descent (seed 000's GS)
        assert short.best_config == {"x": start["x"], "y": start["y"] + 1}
        assert short.used == 1 + len(plain.space.neighbor_index(plain.space.to_index([start])[0]))
        assert seeds_gs.ask(1) == []
        assert seeds_gs.settings() == {"radius": 1, "moved_ignores": ("y",)}
        assert plain.settings() == {"radius": 1}  # the default keeps earlier run keys


def test_greedy_checks_the_ignored_parameters() -> None:
    with pytest.raises(ConfigError, match="moved_ignores"):
        make_strategy("greedy", Bowl().space, moved_ignores=["w"])


def test_greedy_value_steps_move_by_one_in_value() -> None:
    space = Space([Ordinal("p", [1, 2, 4, 8]), IntRange("x", 0, 5), Categorical("c", ["a", "b"])])
    gs = make_strategy("greedy", space, seed=0, step="value")
    gs._current = space.to_index([{"p": 4, "x": 2, "c": "a"}])[0]
    moves = space.to_configs(gs._neighbours())
    # p = 4 has no value 3 or 5: it never moves; x moves by 1; c by a level
    assert sorted((m["p"], m["x"], m["c"]) for m in moves) == [
        (4, 1, "a"),
        (4, 2, "b"),
        (4, 3, "a"),
    ]
    gs._current = space.to_index([{"p": 1, "x": 0, "c": "b"}])[0]
    assert {(m["p"], m["x"]) for m in space.to_configs(gs._neighbours())} == {
        (2, 0),
        (1, 1),
        (1, 0),
    }
    assert gs.settings()["step"] == "value"
    assert "step" not in make_strategy("greedy", space).settings()  # earlier run keys kept


# ------------------------------------------------------------------- genetic
def test_genetic_roulette_draws_parents_in_proportion_to_speed() -> None:
    ga = make_strategy("genetic", Bowl().space, seed=1, selection="roulette")
    draws = Counter(ga._parent(np.array([1.0, 2.0, np.inf])) for _ in range(3000))
    assert draws[2] == 0  # a failed member is never a parent
    assert draws[0] / 3000 == pytest.approx(2 / 3, abs=0.04)
    # not all positive: weights 1 / (f - g), g = best - (worst - best) = -3
    draws = Counter(ga._parent(np.array([-1.0, 0.0, 1.0])) for _ in range(3000))
    assert [draws[i] / 3000 for i in range(3)] == pytest.approx([6 / 13, 4 / 13, 3 / 13], abs=0.04)
    assert ga.settings()["selection"] == "roulette"
    assert "selection" not in make_strategy("genetic", Bowl().space).settings()


def test_genetic_one_gene_mutation_changes_at_most_one_gene() -> None:
    space = ConstrainedBitsProblem().space
    ga = make_strategy("genetic", space, seed=3, mutate="one", mutation=1.0)
    genes = space.to_index(space.sample(1, seed=0))[0]
    changed = [int((ga._mutate(genes) != genes).sum()) for _ in range(200)]
    assert max(changed) == 1 and sum(changed) > 150  # one gene, redrawn (rarely the same)
    each = make_strategy("genetic", space, seed=3, mutation=1.0)
    assert (each._mutate(genes) != genes).sum() > 20
    assert ga.settings()["mutate"] == "one" and "mutate" not in each.settings()


def test_genetic_generations_measure_population_minus_elites() -> None:
    _, result = _run_strategy(ConstrainedBitsProblem(), "genetic", 20 + 19 * 2)
    assert Counter(t.info["generation"] for t in result.trials) == {0: 20, 1: 19, 2: 19}


def test_genetic_validates_its_settings() -> None:
    with pytest.raises(ConfigError, match="elitism"):
        make_strategy("genetic", Bowl().space, population=4, elitism=4)


# ----------------------------------------------------------------- annealing
def test_annealing_improves_on_its_start() -> None:
    _, result = _run_strategy(Bowl(), "annealing", 150, temperature=0.5)
    assert result.best_value < result.trials[0].value and result.best_value <= 2.0


# ------------------------------------------------------------------- lm / qr
def test_lm_replays_seed_000_schedule_on_the_laplacian(laplacian) -> None:
    strategy, result = _run_strategy(laplacian, "lm", 120, seed=1, fix=SEED_000_SCHEDULE)
    fixed = [set(d.fixed) for d in strategy.decisions]
    assert fixed == [
        {"vector_length", "lws_y"},
        {"y_component_number"},
        {"elements_number"},
        {"threads_number"},
    ]
    steps = Counter(t.info["step"] for t in result.trials if t.info["phase"] == "design")
    assert steps == {0: 50, 1: 40, 2: 20, 3: 5}
    final = [t for t in result.trials if t.info["phase"] == "final"]
    assert 1 <= len(final) <= 4
    # every proposal records the slice it lies in; the last one is the final slice
    last = strategy.fixed_values()
    assert final[-1].info["fixed"] == last and set(last) == set().union(*fixed)
    assert all(t.config[k] == v for t in final for k, v in t.info["fixed"].items())
    assert steps and result.trials[0].info["fixed"] == {}
    assert result.used <= 119


def test_lm_fixes_the_most_significant_factors_first() -> None:
    problem = ScreeningProblem(levels=5, noise=0.05)
    strategy, _ = _run_strategy(problem, "lm", 120, samples=(40, 30, 30), fix=(2, 2, 2))
    first = set(strategy.decisions[0].fixed)
    assert first <= {"x1", "x3", "x5", "x7", "x8"} and "x5" in first
    assert strategy.decisions[0].fixed["x5"] == -1.0


def test_lm_checks_its_schedule() -> None:
    space = ScreeningProblem().space
    with pytest.raises(ConfigError, match="same"):
        make_strategy("lm", space, samples=(10, 10), fix=(1,))
    with pytest.raises(ConfigError, match="'x9'"):
        make_strategy("lm", space, samples=(10,), fix=("x9",))


def test_qr_fits_the_lower_quantile(laplacian) -> None:
    strategy, result = _run_strategy(laplacian, "qr", 120, seed=2, fix=SEED_000_SCHEDULE)
    assert strategy.quantile == 0.05 and strategy.settings()["quantile"] == 0.05
    assert len(strategy.decisions) == 4 and result.best_value / laplacian.optimum < 1.1
    with pytest.raises(ConfigError):
        make_strategy("qr", laplacian.space, quantile=1.5)


# ---------------------------------------------------------------------- dlmt
SCREENING_MODEL = "x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x8^2 + x3*x5"


def test_dlmt_fixes_the_active_factors_first_and_finds_the_optimum() -> None:
    problem = ScreeningProblem(levels=5, noise=0.01, seed=4)
    strategy, result = _run_strategy(problem, "dlmt", 200, formula=SCREENING_MODEL, max_fix=None)
    assert set(strategy.decisions[0].fixed) == {"x1", "x3", "x5", "x7", "x8"}
    assert strategy.decisions[0].fixed["x5"] == -1.0 and strategy.decisions[0].fixed["x8"] == 0.0
    assert result.used < 100
    assert result.best_value == pytest.approx(problem.optimum, abs=0.05)


def test_dlmt_design_size_follows_the_model_terms() -> None:
    problem = ScreeningProblem(levels=5)
    _, result = _run_strategy(problem, "dlmt", 200, formula=SCREENING_MODEL)
    first = [t for t in result.trials if t.info["step"] == 0]
    assert len(first) == 2 * (10 + 1)


@pytest.mark.parametrize(("budget", "per_step"), [(200, 1), (60, 2)])
def test_dlmt_paced_fixing_fixes_as_few_factors_as_the_budget_allows(budget, per_step) -> None:
    # 22-point first design; planned designs of 10 terms over 8 factors then fit in 177
    # points fixing one factor per step, but in 37 only fixing two.
    problem = ScreeningProblem(levels=5, noise=0.01, seed=4)
    strategy, result = _run_strategy(
        problem, "dlmt", budget, formula=SCREENING_MODEL, max_fix="budget"
    )
    first = strategy.decisions[0]
    assert len(first.fixed) == per_step
    assert set(first.fixed) <= {"x1", "x3", "x5", "x7", "x8"}
    assert all(len(d.fixed) <= per_step for d in strategy.decisions)
    assert result.used <= budget


def test_dlmt_forced_schedule_reproduces_the_seeds_run(laplacian) -> None:
    schedule = (
        "vector_length + lws_y",
        "y_component_number + threads_number",
        "elements_number",
        "load_overlap + temporary_size",
    )
    strategy, result = _run_strategy(
        laplacian,
        "dlmt",
        125,
        seed=3,
        formula=LAPLACIAN_MODEL,
        fix=schedule,
        candidates=2000,
        restarts=2,
    )
    assert [set(d.fixed) for d in strategy.decisions] == [set(s.split(" + ")) for s in schedule]
    assert result.used <= 24 + 18 + 10 + 6 + 1
    assert result.best_config["vector_length"] == 1 and result.best_config["lws_y"] == 1


def test_dlmt_validates_its_options() -> None:
    space = ScreeningProblem().space
    with pytest.raises(ConfigError, match="transform"):
        make_strategy("dlmt", space, transform="log")
    with pytest.raises(ConfigError, match="significance"):
        make_strategy("dlmt", space, significance=0.0)


# ----------------------------------------------------------------- two-stage
def test_two_stage_trains_then_stops_below_the_threshold() -> None:
    problem = Bowl()
    _, result = _run_strategy(problem, "two-stage", 400, samples=30, threshold=0.1, ensemble=3)
    stages = [t.info["stage"] for t in result.trials]
    assert stages[:30] == [1] * 30 and set(stages[30:]) == {2}
    assert 30 < result.used < 400
    assert result.best_value < min(t.value for t in result.trials[:30])
    _, strict = _run_strategy(problem, "two-stage", 400, samples=30, threshold=0.4, ensemble=3)
    assert strict.used < result.used


def test_ask_waits_for_the_results_of_a_step() -> None:
    problem = Bowl()
    run = TuningRun(problem, "greedy", seed=0, budget=50)
    start = run.ask(5)
    assert len(start) == 1  # the neighbours depend on the start's value
    assert run.ask(5) == []
    run.tell(start[0], problem.evaluate(start[0]))
    assert len(run.ask(10)) > 1
    assert np.isfinite(run.best.value)


def test_dlmt_confirm_keeps_the_factors_the_best_measurement_backs() -> None:
    strategy = make_strategy("dlmt", Bowl().space, seed=0, confirm=True)
    rows = np.array([[3, 8, 5], [0, 0, 0], [11, 11, 0]])
    configs = Bowl().space.to_configs(rows)
    strategy.tell(  # measurements of the slice (warm starts join the strategy's history)
        [
            Trial(i, c, Measurement.success(v), origin=Origin.WARM_START)
            for i, (c, v) in enumerate(zip(configs, [1.0, 5.0, 9.0], strict=True))
        ]
    )
    predicted = np.array([3, 2, 5])  # agrees with the best measurement on x and z
    assert strategy._confirmed(["y", "x", "z"], predicted) == ["x", "z"]
    assert strategy._confirmed(["y"], predicted) == ["y"]  # none agrees: the most significant
    assert strategy.settings()["confirm"] is True
    assert "confirm" not in make_strategy("dlmt", Bowl().space).settings()  # earlier run keys


def test_a_sobol_run_leaves_the_callers_warnings_alone():
    """The Sobol stream silences scipy's balance warning around each draw only: a filter
    held across its ``yield`` hid every UserWarning of the process while it was paused."""
    import warnings

    space = Space([IntRange("a", 0, 9), IntRange("b", 0, 9)])
    strategy = make_strategy("sobol", space, seed=1)
    seen: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *args, **kwargs: seen.append(str(message))
        strategy.ask()  # the stream starts, and pauses at its first yield
        warnings.warn("the caller's warning", UserWarning, stacklevel=1)
    assert seen == ["the caller's warning"]
