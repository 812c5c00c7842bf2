"""The round-robin strategy (HAQ's rule for meeting a size limit) on a generic space."""

from __future__ import annotations

from gpautotune.problems.synthetic import ConstrainedBitsProblem
from gpautotune.space import IntRange, Space
from gpautotune.strategies import make_strategy
from gpautotune.strategies.round_robin import round_robin_index, round_robin_walk
from gpautotune.tuner import tune


def test_walk_lowers_one_parameter_at_a_time_in_turn() -> None:
    space = Space(
        [IntRange("a", 1, 3), IntRange("b", 1, 2), IntRange("c", 1, 3)],
        constraints=["a + b + c <= 4"],
    )
    walk = space.to_configs(round_robin_walk(space))
    as_tuples = [(c["a"], c["b"], c["c"]) for c in walk]
    assert as_tuples[:6] == [(3, 2, 3), (2, 2, 3), (2, 1, 3), (2, 1, 2), (1, 1, 2), (1, 1, 1)]
    assert space.to_configs(round_robin_index(space))[0] == {"a": 1, "b": 1, "c": 2}


def test_strategy_proposes_one_configuration_then_stops() -> None:
    problem = ConstrainedBitsProblem(layers=12, limit_bits=3.0, seed=1)
    result = tune(problem, "round-robin", budget=10)
    assert len(result.trials) == 1 and result.trials[0].ok
    config = result.trials[0].config
    assert problem.space.valid_mask(problem.space.to_index([config]))[0]
    strategy = make_strategy("round-robin", problem.space, seed=7)
    assert [p.config for p in strategy.ask(3)] == [config]  # deterministic, seed-free
    assert strategy.ask(1) == []


def test_no_valid_configuration_means_no_proposal() -> None:
    space = Space([IntRange("a", 1, 3)], constraints=["a > 5"])
    assert round_robin_index(space).shape == (0, 1)
    assert make_strategy("round-robin", space).ask(1) == []
