"""Settings that used to pass the check and then did nothing, stopped a run early or
crashed it: each is refused at construction with one line naming the option."""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from gpautotune import tune
from gpautotune.exceptions import ConfigError
from gpautotune.problems import BoothProblem
from gpautotune.space import IntRange, Real, Space
from gpautotune.strategies import make_strategy

SPACE = BoothProblem().space


def _error(name: str, **options: Any) -> str:
    with pytest.raises(ConfigError) as info:
        make_strategy(name, SPACE, seed=0, **options)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"strategy {name!r}: ")
    return message.removeprefix(f"strategy {name!r}: ")


#: Every float option of the built-in strategies (an infinite value has no meaning in any).
FLOAT_OPTIONS = [
    ("gpr", "kappa"),
    ("gpr", "stall_kappa"),
    ("gpr", "noise"),
    ("gpr", "lengthscale_max"),
    ("gpr", "screen"),
    ("gpr", "polish"),
    ("gpr", "restart_from"),
    ("gpr", "thompson_after"),
    ("gpr-seeds", "kappa"),
    ("gpr-seeds", "noise"),
    ("annealing", "temperature"),
    ("annealing", "cooling"),
    ("dlmt", "design_factor"),
    ("dlmt", "significance"),
    ("genetic", "mutation"),
    ("qr", "quantile"),
    ("two-stage", "threshold"),
]


@pytest.mark.parametrize(("name", "option"), FLOAT_OPTIONS)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, "inf"])
def test_infinite_and_nan_option_values_are_refused(name, option, value):
    message = _error(name, **{option: value})
    assert message.startswith(f"{option}: ") and repr(value) in message
    assert "finite" in message or "noise variance" in message


def test_an_infinite_design_factor_is_refused_before_it_overflows():
    assert _error("dlmt", design_factor=math.inf) == (
        "design_factor: Input should be a finite number (got inf)"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"thompson_after": 0.9},
            "thompson_after sets when the steps of thompson_every begin; give "
            "thompson_every or leave thompson_after out",
        ),
        (
            {"forest_after": 0.9},
            "forest_after sets when the steps of forest_every begin; give "
            "forest_every or leave forest_after out",
        ),
        (
            {"stall": None, "escape": "poll"},
            "escape shapes the escape steps of stall, and stall is None (no escapes): "
            "give stall or leave it out",
        ),
        (
            {"stall": None, "stall_kappa": 3.0, "poll_pairs": True},
            "stall_kappa, poll_pairs shape the escape steps of stall, and stall is None "
            "(no escapes): give stall or leave them out",
        ),
        ({"stall": None, "poll_adjacent": True}, "poll_adjacent shapes"),
        ({"stall": None, "poll_levels": "nearest"}, "poll_levels shapes"),
        ({"stall": None, "polish": 0.2}, "polish shapes"),
    ],
)
def test_gpr_options_that_act_only_with_another_are_refused_alone(options, message):
    assert _error("gpr", **options).startswith(message)


def test_gpr_seeds_without_stall_refuses_an_escape_option():
    assert _error("gpr-seeds", escape="poll").startswith("escape shapes the escape steps")
    make_strategy("gpr-seeds", SPACE, seed=0, escape="poll", stall=5)


@pytest.mark.parametrize(
    "options",
    [
        {"thompson_after": 0.5, "forest_after": 0.5},  # given at their defaults
        {"stall": None, "escape": "rotate", "stall_kappa": 10, "polish": 0},
        {"thompson_after": 0.9, "thompson_every": 3, "forest_after": 0.1, "forest_every": 2},
        {"stall": 4, "escape": "poll", "stall_kappa": 3.0, "poll_levels": "nearest"},
    ],
)
def test_those_options_at_their_defaults_or_with_their_partner_are_accepted(options):
    make_strategy("gpr", SPACE, seed=0, **options)


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (rather than hang) past 10 seconds."""

    def expire(*_: Any) -> None:
        raise TimeoutError("still running after 10 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_radius_past_every_level_gives_the_same_neighbours_at_once(deadline):
    space = Space([IntRange("x", 1, 8), IntRange("y", 1, 5)])
    row = np.array([2.0, 1.0])
    assert np.array_equal(space.neighbor_index(row, 10**12), space.neighbor_index(row, 7))
    assert len(space.neighbor_index(row, 10**12)) == 7 + 4


def test_a_huge_radius_on_a_real_parameter_gives_the_same_moves_at_once(deadline):
    space = Space([IntRange("x", 1, 8), Real("z", 0.0, 1.0)])
    row = np.array([2.0, 0.5])
    huge = space.neighbor_index(row, 10**12)
    wide = space.neighbor_index(row, 60)  # past the unit range: the bounds repeat
    assert {tuple(r) for r in huge} == {tuple(r) for r in wide}


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("greedy", {}),
        ("greedy", {"step": "value"}),
        ("greedy-restart", {}),
        ("annealing", {}),
    ],
)
def test_greedy_and_annealing_with_a_huge_radius_propose_at_once(deadline, name, options):
    space = Space([IntRange("x", 1, 8), IntRange("y", 1, 8)])
    result = tune(
        lambda c: float(c["x"] + c["y"]),
        name,
        6,
        space=space,
        seed=0,
        strategy_options={"radius": 10**12, **options},
    )
    assert len(result.trials) == 6


@pytest.mark.parametrize(("designs", "entry"), [([1], "designs.0"), ([6, 0], "designs.1")])
def test_dlmt_refuses_a_design_too_small_to_fit_its_model(designs, entry):
    assert _error("dlmt", designs=designs) == (
        f"{entry}: Input should be greater than or equal to 2 (got {designs[-1]})"
    )


def test_dlmt_with_designs_of_two_goes_on_past_the_first_design():
    result = tune(
        lambda c: float((c["x"] - 3) ** 2 + (c["y"] - 1) ** 2),
        "dlmt",
        12,
        space=Space([IntRange("x", 1, 8), IntRange("y", 1, 8)]),
        seed=0,
        strategy_options={"designs": [2]},
    )
    assert len(result.trials) > 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"fix": ["x1", "nosuch"]},
            "fix.1: model formula 'nosuch' names an unknown parameter 'nosuch'; "
            "known parameters: ['x1', 'x2']",
        ),
        (
            {"formula": "x1 + nosuch"},
            "formula: model formula 'x1 + nosuch' names an unknown parameter 'nosuch'; "
            "known parameters: ['x1', 'x2']",
        ),
        ({"fix": ["x1 +"]}, "fix.0: cannot parse model formula 'x1 +'"),
    ],
)
def test_dlmt_formula_errors_name_the_option(options, message):
    assert _error("dlmt", **options).startswith(message)


@pytest.mark.parametrize(
    ("name", "options", "option"),
    [
        ("gpr", {"trend": "x1 + nosuch"}, "trend"),
        ("lm", {"formula": "x1 + nosuch"}, "formula"),
        ("lm", {"fix": ["nosuch", 1, 1, 1]}, "fix.0"),
        ("qr", {"formula": "nosuch"}, "formula"),
    ],
)
def test_formula_errors_name_the_option(name, options, option):
    assert _error(name, **options).startswith(f"{option}: model formula")


@pytest.mark.parametrize(
    ("name", "option"), [("gpr", "n_init"), ("gpr", "kappa"), ("genetic", "elitism")]
)
def test_true_or_false_is_refused_where_a_number_is_meant(name, option):
    """pydantic reads ``true`` as 1 for an integer and 1.0 for a float (``n_init: true``
    in a YAML file ran with one initial point)."""
    assert "a number, not true/false (got True)" in _error(name, **{option: True})


def test_a_boolean_option_still_takes_true():
    assert make_strategy("gpr", SPACE, seed=0, trust_region=True).options.trust_region is True
