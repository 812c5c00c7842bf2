import pytest
from rich.console import Console

from gpautotune.analysis.explain import (
    explain_run,
    fit_run_surrogate,
    indices_table,
    load_run,
    run_space,
)
from gpautotune.exceptions import GPAutotuneError
from gpautotune.problems.synthetic import ConstrainedBitsProblem, ScreeningProblem
from gpautotune.tuner import tune


def test_a_space_with_callable_quantities_is_rebuilt_by_its_problem(tmp_path):
    problem = ConstrainedBitsProblem(layers=5)
    tune(problem, "random", 6, storage=tmp_path / "runs.db", seed=1)
    record, trials = load_run(tmp_path / "runs.db")
    assert len(trials) == 6
    assert run_space(record).describe() == problem.space.describe()


def test_derived_quantities_are_rebuilt_in_dependency_order(tmp_path, laplacian):
    tune(laplacian, "random", 3, storage=tmp_path / "runs.db", seed=0)
    record, _ = load_run(tmp_path / "runs.db", 1)
    space = run_space(record)
    assert space.describe() == laplacian.space.describe()
    assert space.count_valid().estimate == laplacian.space.count_valid().estimate


@pytest.mark.slow
def test_explain_run_refits_with_the_run_settings_and_writes_a_chart(tmp_path):
    db = tmp_path / "runs.db"
    tune(ScreeningProblem(levels=3), "random", 4, storage=db, seed=0)
    tune(
        ScreeningProblem(levels=3),
        "gpr",
        9,
        storage=db,
        seed=2,
        strategy_options={"n_init": 6, "restarts": 0, "trend": "constant"},
    )
    record, trials = load_run(db)  # the last run
    assert record.id == 2
    strategy = fit_run_surrogate(record, run_space(record), trials)
    assert (
        strategy.options.trend == "constant"
        and strategy.seed == 2
        and strategy.gp.model is not None
    )
    steps = []
    table, png = explain_run(
        db,
        2,
        out_dir=tmp_path / "out",
        n=128,
        paths=8,
        bootstrap=20,
        progress=lambda i, what: steps.append((i, what)),
    )
    assert [i for i, _ in steps] == [0, 1, 2, 3] and "9 ok trials" in steps[1][1]
    assert png is not None and png.stat().st_size > 0
    assert (tmp_path / "out" / "run2-sobol-box.csv").is_file()
    assert (
        table.attrs["run_id"] == 2
        and table.attrs["strategy"] == "gpr"
        and table.attrs["n_trials"] == 9
    )
    assert sorted(table["parameter"]) == sorted(ScreeningProblem().space.names)
    assert (table["ST_low"] <= table["ST"]).all() and (table["ST"] <= table["ST_high"]).all()
    valid, _ = explain_run(db, 2, domain="valid", n=128, paths=4, bootstrap=10)
    assert valid.attrs["domain"] == "valid" and "valid set" in valid.attrs["method"]
    assert valid.set_index("parameter").loc["x5", "rank"] == 1  # 3.1 x5 dominates the objective
    console = Console(record=True, width=140)
    console.print(indices_table(table, title="run 1", screen=0.05))
    text = console.export_text()
    assert "x5" in text and "fix?" in text


def test_missing_journal_is_a_user_error(tmp_path):
    with pytest.raises(GPAutotuneError, match="does not exist"):
        explain_run(tmp_path / "nope.db")


def test_model_inputs_survive_the_round_trip(tmp_path):
    from gpautotune.space import IntRange, Space
    from gpautotune.tuner import TuningRun

    space = Space(
        [IntRange("a", 1, 4), IntRange("b", 1, 4)],
        derived={"ratio": "a / b"},
        model_inputs=["ratio"],
    )
    run = TuningRun(space, "random", storage=tmp_path / "runs.db", seed=0, budget=2)
    for config in run.ask(2):
        run.tell(config, 1.0)
    record, _ = load_run(tmp_path / "runs.db")
    assert run_space(record).describe() == space.describe()


def test_a_gpr_run_with_derived_inputs_is_explained_without_a_warning(tmp_path, caplog):
    """``derived`` (and ``relations``) are what a run's options resolved to, stored beside
    them: explaining the run rebuilds them and warns of no unknown setting."""
    from gpautotune.problems.function import FunctionProblem
    from gpautotune.space import Ordinal, Space

    space = Space(
        [Ordinal("a", [1, 2, 4, 8, 16]), Ordinal("b", [1, 2, 4, 8, 16])],
        constraints=["a * b <= 64"],
    )
    problem = FunctionProblem(lambda c: (c["a"] * c["b"] - 8) ** 2 + c["a"], space, name="ab")
    db = tmp_path / "runs.db"
    options = {"n_init": 5, "restarts": 0, "max_iter": 20}
    tune(problem, "gpr", 7, storage=db, seed=0, strategy_options=options)
    record, trials = load_run(db)
    assert record.settings["strategy"]["derived"] == ["a*b"]
    with caplog.at_level("WARNING"):
        strategy = fit_run_surrogate(record, run_space(record), trials)
    assert "does not know" not in caplog.text
    assert [m.label for m in strategy.monomials] == ["a*b"]
