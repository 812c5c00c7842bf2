"""Strategy settings: one frozen, self-checking dataclass per strategy, the same checks
and messages from Python and from YAML files."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import Field, PositiveInt

from gpautotune.comparison import load_comparison
from gpautotune.config import Section, build_strategy
from gpautotune.exceptions import ConfigError
from gpautotune.problems import BoothProblem
from gpautotune.strategies import (
    Proposal,
    Strategy,
    StrategySettings,
    available_strategies,
    make_strategy,
    strategy_class,
    strategy_settings,
)
from gpautotune.strategies.gpr import GPRSettings, GPRStrategy

SPACE = BoothProblem().space

#: Every kind of bad GPR option: (option, value, a word of the rule the message gives).
BAD_GPR = [
    ("kernel", "foo", "'matern52', 'matern32', 'matern12' or 'rbf'"),
    ("lengthscale_prior", "flat", "'gamma', 'dim_scaled' or 'unit'"),
    ("noise", "abc", "'learned' or a fixed noise variance >= 0"),
    ("noise", -0.1, "'learned' or a fixed noise variance >= 0"),
    ("backlog", -1, "greater than or equal to 0"),
    ("radius", -2, "greater than or equal to 0"),
    ("kappa", -0.5, "greater than or equal to 0"),
    ("perturbations", -1, "greater than or equal to 0"),
    ("n_best", -1, "greater than or equal to 0"),
    ("exhaustive_limit", -5, "greater than or equal to 0"),
    ("restarts", -1, "greater than or equal to 0"),
    ("n_init", 0, "greater than 0"),
    ("sample_size", 0, "greater than 0"),
    ("fresh_every", 0, "greater than 0"),
    ("max_iter_warm", 0, "greater than 0"),
    ("stall", 0, "greater than 0"),
    ("stall_kappa", -1.0, "greater than 0"),
    ("lengthscale_max", 0.01, "greater than 0.05"),
    ("screen", 1.5, "less than 1"),
    ("acquisition", "ucb", "'logei', 'ei', 'pi', 'lcb' or 'hedge'"),
    ("init_method", "halton", "'sobol', 'random' or 'lhs'"),
    ("output_warp", "rank", "'none' or 'copula'"),
    ("input_warp", "beta", "'none' or 'kumaraswamy'"),
    ("gradient", "numeric", "'autograd' or 'closed_form'"),
    ("escape", "random", "'cycle', 'far', 'lcb', 'poll' or 'rotate'"),
    ("log_transform", "maybe", "valid boolean"),
    ("feasibility", "perhaps", "valid boolean"),
    ("n_init", 2.5, "valid integer"),
    ("extra_inputs", 3, "valid tuple"),
]


def _python_error(**options: Any) -> str:
    with pytest.raises(ConfigError) as info:
        GPRStrategy(SPACE, seed=0, **options)
    return str(info.value)


def _yaml_error(tmp_path: Path, options: dict[str, Any]) -> str:
    text = yaml.safe_dump(
        {
            "problem": {"name": "booth"},
            "strategies": [{"name": "gpr", **options}],
            "repetitions": 1,
            "budget": 3,
            "storage": str(tmp_path / "c.db"),
        }
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_comparison(path)
    return str(info.value)


@pytest.mark.parametrize(("option", "value", "rule"), BAD_GPR)
def test_bad_gpr_options_get_one_line_naming_the_option_and_the_rule(option, value, rule):
    message = _python_error(**{option: value})
    assert "\n" not in message
    assert message.startswith(f"strategy 'gpr': {option}: ")
    assert rule in message and repr(value) in message


@pytest.mark.parametrize(("option", "value", "rule"), BAD_GPR)
def test_python_and_yaml_refuse_a_bad_option_with_the_same_message(tmp_path, option, value, rule):
    python = _python_error(**{option: value}).removeprefix("strategy 'gpr': ")
    from_yaml = _yaml_error(tmp_path, {option: value})
    assert from_yaml == f"{tmp_path / 'c.yaml'}: strategies.0 (gpr): {python}"
    with pytest.raises(ConfigError) as info:  # the tuning file's path: build_strategy
        build_strategy(Section(name="gpr", **{option: value}), BoothProblem(), 0)
    assert str(info.value) == f"strategy 'gpr': {python}"
    with pytest.raises(ConfigError) as info:  # and the registry
        make_strategy("gpr", SPACE, **{option: value})
    assert str(info.value) == f"strategy 'gpr': {python}"


def test_unknown_options_are_listed_with_the_allowed_ones(tmp_path):
    """A misspelt option is named with the likeliest meant one, then every allowed one;
    a name like none of them gets no guess."""
    message = _python_error(kapa=1.0)
    assert message.startswith(
        "strategy 'gpr': unknown option(s) ['kapa'] (did you mean 'kapa' -> 'kappa'?); allowed: ["
    )
    assert "'stall_kappa'" in message.partition("allowed: ")[2]
    assert "did you mean" not in _python_error(zzzzqx=1)
    assert _yaml_error(tmp_path, {"kapa": 1.0}).endswith(message.removeprefix("strategy 'gpr': "))


def test_settings_are_frozen_and_converted_once():
    strategy = GPRStrategy(SPACE, seed=0, kappa=1, noise="1e-4", extra_inputs=[])
    assert isinstance(strategy.options, GPRSettings)
    assert strategy.options.kappa == 1.0 and isinstance(strategy.options.kappa, float)
    assert strategy.options.noise == pytest.approx(1e-4)  # YAML 1.1 reads 1e-4 as a string
    assert strategy.options.extra_inputs == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        strategy.options.kappa = 2.0  # type: ignore[misc]


def test_yaml_and_python_give_the_same_settings_and_run_key_values(tmp_path):
    options = {"kappa": 2, "noise": 0.01, "stall": 5, "extra_inputs": []}
    from_python = make_strategy("gpr", SPACE, seed=1, **options).settings()
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"name": "gpr", **options}))
    section = Section(**yaml.safe_load(path.read_text()))
    assert build_strategy(section, BoothProblem(), 1).settings() == from_python


def test_gpr_settings_keep_the_run_key_shape():
    default = GPRStrategy(SPACE, seed=0).settings()
    assert "screen" not in default and default["stall"] == 7 and default["n_init"] == 10
    without_stall = GPRStrategy(SPACE, seed=0, stall=None, screen=0.1).settings()
    assert not {"stall", "stall_kappa", "escape"} & set(without_stall)
    assert without_stall["screen"] == 0.1
    assert "input_warp" not in default  # an option added later leaves earlier keys as they were
    warped = GPRStrategy(SPACE, seed=0, input_warp="kumaraswamy").settings()
    assert warped == {**default, "input_warp": "kumaraswamy"}
    assert "gradient" not in default
    closed = GPRStrategy(SPACE, seed=0, gradient="closed_form")
    assert closed.settings() == {**default, "gradient": "closed_form"}
    assert all(gp.settings.gradient == "closed_form" for gp in closed.choice.gps)
    assert "portfolio" not in default
    hedge = GPRStrategy(SPACE, seed=0, acquisition="hedge").settings()
    two = GPRStrategy(SPACE, seed=0, acquisition="hedge", portfolio=["logei", "lcb"]).settings()
    assert two == {**hedge, "portfolio": ("logei", "lcb")}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"acquisition": "hedge", "portfolio": ["lcb"]}, "two or more distinct"),
        ({"acquisition": "hedge", "portfolio": ["pi", "pi"]}, "two or more distinct"),
        ({"acquisition": "hedge", "portfolio": ["pi", "ucb"]}, "portfolio.1"),
        ({"portfolio": ["logei", "lcb"]}, "only with acquisition 'hedge'"),
    ],
)
def test_a_bad_portfolio_names_what_to_fix(options, words):
    with pytest.raises(ConfigError, match="strategy 'gpr'") as info:
        make_strategy("gpr", SPACE, **options)
    assert words in str(info.value)


@pytest.mark.parametrize("name", available_strategies())
def test_every_strategy_declares_its_options_once(name):
    cls = strategy_class(name)
    settings = cls.Settings()  # every option has a default
    strategy = make_strategy(name, SPACE, seed=0, **settings.as_dict())
    assert strategy.options == settings
    assert strategy.settings() == make_strategy(name, SPACE, seed=0).settings()


@pytest.mark.parametrize(
    ("name", "options", "words"),
    [
        ("genetic", {"population": 4, "elitism": 4}, "elitism must be below population"),
        ("lm", {"samples": [10, 5], "fix": [1]}, "samples and fix need the same"),
        ("lm", {"fix": [1, -1, 1, 1]}, "fix.1: a fix entry is a count >= 0 or a formula"),
        ("qr", {"quantile": 1.0}, "quantile: Input should be less than 1"),
        ("dlmt", {"transform": "log"}, "transform: Input should be"),
        ("annealing", {"cooling": 0}, "cooling: Input should be greater than 0"),
        ("two-stage", {"model": "svm"}, "model: Input should be 'mlp' or 'gp'"),
    ],
)
def test_other_strategies_check_their_options_the_same_way(name, options, words):
    with pytest.raises(ConfigError) as info:
        make_strategy(name, SPACE, **options)
    assert str(info.value).startswith(f"strategy {name!r}: ") and words in str(info.value)


def test_a_new_strategy_declares_its_options_in_a_few_lines():
    @strategy_settings
    class WalkSettings(StrategySettings):
        steps: PositiveInt = 10
        rate: Annotated[float, Field(gt=0, le=1)] = 0.5

    class Walk(Strategy):
        name = "walk"
        Settings = WalkSettings

        def _propose(self, n: int) -> list[Proposal]:
            return []

    walk = Walk(SPACE, seed=0, rate=1)
    assert walk.options == WalkSettings(steps=10, rate=1.0)
    assert walk.settings() == {"steps": 10, "rate": 1.0}
    assert list(Walk.Settings.parameters()) == ["steps", "rate"]
    with pytest.raises(ConfigError) as info:
        Walk(SPACE, rate=2)
    assert (
        str(info.value) == "strategy 'walk': rate: Input should be less than or equal to 1 (got 2)"
    )
    with pytest.raises(ConfigError) as info:  # the value 0 is in the message, as the bound
        Walk(SPACE, steps=0)
    assert str(info.value) == "strategy 'walk': steps: Input should be greater than 0 (got 0)"
