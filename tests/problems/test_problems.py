import numpy as np
import pandas as pd
import pytest

from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems import (
    BoothProblem,
    ConstrainedBitsProblem,
    Measurement,
    ReplayProblem,
    ScreeningProblem,
    Status,
    laplacian_replay,
    make_problem,
)
from gpautotune.space import IntRange, Space


def test_measurement_contract():
    assert Measurement.success(2, samples=[1, 3]).value == 2.0
    with pytest.raises(ValueError):
        Measurement(Status.OK, None)
    with pytest.raises(ValueError):
        Measurement(Status.TIMEOUT, 1.0)
    assert Measurement.failure("build_error", "log").status is Status.BUILD_ERROR


def test_laplacian_replay_answers_from_the_table(laplacian):
    best = laplacian.best_known()
    assert best == dict(
        elements_number=6,
        y_component_number=6,
        vector_length=1,
        temporary_size=2,
        load_overlap=True,
        threads_number=1024,
        lws_y=2,
    )
    m = laplacian.evaluate(best)
    assert m.ok and m.value == laplacian.optimum == pytest.approx(1.16501e-10, rel=1e-4)


def test_replay_never_raises_for_bad_configurations(laplacian):
    best = laplacian.best_known()
    assert laplacian.evaluate({**best, "lws_y": 3}).status is Status.INVALID
    assert laplacian.evaluate({**best, "threads_number": 32, "lws_y": 64}).status is Status.INVALID
    assert laplacian.evaluate({"nonsense": 1}).status is Status.INVALID


def test_replay_rows_absent_from_the_table_are_invalid(tmp_path):
    space = Space([IntRange("a", 1, 3), IntRange("b", 1, 3)])
    table = pd.DataFrame({"a": [1, 2, 9], "b": [1, 2, 1], "t": [5.0, 3.0, 1.0]})
    with pytest.warns(UserWarning, match="1 of 3 rows"):
        problem = ReplayProblem(table, space, objective="t")
    assert problem.dropped_rows == 1  # a=9 is not a level
    assert problem.optimum == 3.0
    assert problem.evaluate({"a": 3, "b": 3}).status is Status.INVALID
    with pytest.raises(ConfigError, match="lacks columns"):
        ReplayProblem(table, space, objective="time")


def test_missing_data_file_says_how_to_fix():
    with pytest.raises(DataNotFoundError, match="data"):
        laplacian_replay(data="/nonexistent/search_space.csv")


def test_booth_and_screening_optima():
    booth = BoothProblem()
    assert booth.optimum == 0 and booth.best_known() == {"x1": 1, "x2": 3}
    scr = ScreeningProblem(levels=3)
    best = scr.best_known()
    assert (best["x1"], best["x3"], best["x5"], best["x7"], best["x8"]) == (
        1.0,
        1.0,
        -1.0,
        1.0,
        0.0,
    )
    assert scr.evaluate(best).value == pytest.approx(-1.5 + 1.3 - 3.1 - 1.4 - 1.6)


def test_constrained_bits_optimum_is_exact_on_a_small_instance():
    problem = ConstrainedBitsProblem(layers=5, limit_bits=3.0, seed=4)
    configs = problem.space.enumerate()
    values = [problem.evaluate(c).value for c in configs]
    assert min(values) == pytest.approx(problem.optimum)
    assert problem.evaluate(problem.best_known()).value == pytest.approx(problem.optimum)
    # the size predicate rejects most of the raw space
    assert len(configs) < 0.5 * problem.space.size


def test_constrained_bits_rejects_oversized_policies():
    problem = ConstrainedBitsProblem()
    eight = {n: 8 for n in problem.space.names}
    m = problem.evaluate(eight)
    assert m.status is Status.INVALID and "exceeds" in m.error
    assert problem.space.count_valid(samples=20_000).fraction < 0.5


def test_hidden_failure_fails_exactly_above_its_limit():
    from gpautotune.problems.synthetic import HiddenFailureProblem

    p = make_problem("hidden-failure")
    rows = p.space.sample(400, seed=0)
    for config in rows:
        m = p.evaluate(config)
        assert m.ok is (config["a"] * config["b"] <= 40), config
    assert 0.5 < sum(c["a"] * c["b"] > 40 for c in rows) / len(rows) < 0.7
    assert p.optimum == 1.0
    assert p.evaluate({"a": 6, "b": 6, "c": 3, "d": 6, "e": 2, "f": 5}).value == 1.0
    assert HiddenFailureProblem(limit=48).evaluate({**rows[0], "a": 6, "b": 8}).ok
    assert not p.evaluate({**rows[0], "a": 6, "b": 8}).ok
    with pytest.raises(ConfigError, match="limit must be >= 36"):
        HiddenFailureProblem(limit=30)


def test_make_problem_validates_names_and_options():
    assert isinstance(make_problem("booth"), BoothProblem)
    with pytest.raises(ConfigError, match="unknown problem"):
        make_problem("nope")
    with pytest.raises(ConfigError, match="allowed"):
        make_problem("screening", level=3)
    assert np.isfinite(make_problem("screening", levels=3).optimum)
