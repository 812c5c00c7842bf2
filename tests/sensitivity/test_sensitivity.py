import numpy as np
import pandas as pd
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.sensitivity import (
    DOMAINS,
    PosteriorPaths,
    check_domain,
    check_paths,
    sobol_indices,
    surrogate_indices,
)
from gpautotune.sensitivity.reference_functions import (
    g_function,
    g_space,
    g_truth,
    ishigami,
    ishigami_space,
    ishigami_truth,
)
from gpautotune.space import IntRange, Ordinal, Real, Space
from gpautotune.space._sampling import unit_sample
from gpautotune.surrogate import GPSettings, GPSurrogate

COLUMNS = ["parameter", "S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high", "rank"]


def inside(table: pd.DataFrame, key: str, truth: np.ndarray, slack: float = 0.0) -> np.ndarray:
    return (
        (table[f"{key}_low"] - slack <= truth) & (truth <= table[f"{key}_high"] + slack)
    ).to_numpy()


def test_ishigami_box_intervals_contain_the_analytic_indices():
    space = ishigami_space()
    s1, st, s13 = ishigami_truth()
    result = sobol_indices(ishigami(space), space, n=2048, second_order=True, seed=1)
    table = result.table
    assert list(table.columns[: len(COLUMNS)]) == COLUMNS
    assert inside(table, "S1", s1).all() and inside(table, "ST", st).all()
    assert table.set_index("parameter")["rank"].to_dict() == {"x1": 1, "x2": 2, "x3": 3}
    pairs = result.second_order.set_index(["parameter_1", "parameter_2"])
    truth = pd.Series({("x1", "x2"): 0.0, ("x1", "x3"): s13, ("x2", "x3"): 0.0})
    assert ((pairs["S2_low"] <= truth) & (truth <= pairs["S2_high"])).all()
    assert (table["ST_sd_model"] == 0).all() and (
        table["ST_sd_mc"] > 0
    ).all()  # one function: MC error only


@pytest.mark.parametrize("domain", ["box", "valid"])
def test_g_function_on_a_discrete_grid(domain):
    # Without constraints the valid set is the box: both estimators target the same indices.
    space = g_space(levels=16)
    s1, st = g_truth(levels=16)
    table = sobol_indices(g_function(space), space, n=2048, domain=domain, seed=2).table
    assert inside(table, "S1", s1).all() and inside(table, "ST", st).all()
    assert table.loc[table["rank"] == 1, "parameter"].item() == "x1"


def test_valid_set_indices_match_a_brute_force_decomposition():
    # f = a + 2b on {a <= b}: dependent inputs; the estimator sees the whole valid set.
    space = Space([IntRange("a", 0, 9), IntRange("b", 0, 9)], constraints=["a <= b"])
    valid = space.enumerate_index()
    frame = pd.DataFrame(space.to_configs(valid))
    frame["f"] = frame["a"] + 2 * frame["b"]
    var = frame["f"].var(ddof=0)
    s1 = [frame.groupby(k)["f"].transform("mean").var(ddof=0) / var for k in ("a", "b")]
    st = [
        frame.groupby(other)["f"].transform(lambda v: v.var(ddof=0)).mean() / var
        for other in ("b", "a")
    ]
    result = sobol_indices(
        lambda i: space.columns(i)["a"] + 2 * space.columns(i)["b"], space, n=4096, domain="valid"
    )
    assert "all 55 valid configurations" in result.method
    np.testing.assert_allclose(result.table["S1"], s1, atol=1e-12)
    np.testing.assert_allclose(result.table["ST"], st, atol=1e-12)
    assert (result.table["S1"] > result.table["ST"]).all()  # possible only with dependent inputs


def test_screening_flags_a_dummy_parameter():
    space = Space([Real(f"x{i}", -np.pi, np.pi) for i in (1, 2, 3)] + [Real("dummy", 0.0, 1.0)])
    result = sobol_indices(ishigami(space), space, n=1024)
    assert result.screened(0.02) == ["dummy"]
    assert result.table.set_index("parameter").loc["dummy", "rank"] == 4


def test_bad_options_are_refused():
    space = ishigami_space()
    with pytest.raises(ConfigError, match="domain"):
        sobol_indices(ishigami(space), space, domain="all")
    with pytest.raises(ConfigError, match="second-order"):
        sobol_indices(ishigami(space), space, domain="valid", second_order=True)


def test_the_domain_and_paths_checks_are_the_ones_the_command_line_uses_first():
    assert DOMAINS == ("box", "valid")
    for domain in DOMAINS:
        check_domain(domain)
    with pytest.raises(ConfigError, match="domain must be 'box' or 'valid', not 'vald'"):
        check_domain("vald")
    check_paths(1)
    for paths in (0, -3, True, 2.0):
        with pytest.raises(ConfigError, match="paths .* must be >= 1"):
            check_paths(paths)


@pytest.fixture(scope="module")
def ishigami_gp():
    space = ishigami_space()
    X = unit_sample("sobol", 3, 200, seed=0)[:200]  # a power of two is drawn: keep 200
    gp = GPSurrogate(GPSettings(log_transform=False, restarts=0), 3, 0)
    gp.fit(space.encode(X), ishigami(space)(X), seed=0)
    return space, gp


@pytest.mark.slow
def test_posterior_paths_are_consistent_functions_with_the_posterior_moments(ishigami_gp):
    space, gp = ishigami_gp
    X = np.random.default_rng(5).random((300, 3))
    paths = PosteriorPaths(gp, space.encode, 128, seed=3, hyperparameters="fitted")
    values = paths(X)
    np.testing.assert_allclose(
        values[:, :10], paths(X[:10]), atol=1e-9
    )  # same functions on another call
    again = PosteriorPaths(gp, space.encode, 128, seed=3, hyperparameters="fitted")(X)
    np.testing.assert_allclose(values, again, atol=1e-9)  # seeded
    mean, sd = gp.predict(space.encode(X))
    assert np.abs(values.mean(axis=0) - mean).max() < 4 * sd.max() / np.sqrt(128) + 1e-3
    assert 0.5 < (values.var(axis=0) / sd**2).mean() < 2.0
    laplace = PosteriorPaths(gp, space.encode, 32, seed=3)  # hyperparameters drawn per path
    assert laplace.hyper.lengthscale.std(dim=0).min() > 0
    assert (
        laplace.hyper.lengthscale.median(dim=0).values
        / gp.model.covar_module.base_kernel.lengthscale
    ).sub(1).abs().max() < 0.5


@pytest.mark.slow
def test_gp_on_200_points_ishigami_intervals_contain_the_truth(ishigami_gp):
    space, gp = ishigami_gp
    s1, st, _ = ishigami_truth()
    table = surrogate_indices(gp, space.encode, space, n=1024, paths=32, seed=0).table
    assert inside(table, "S1", s1).all() and inside(table, "ST", st).all()
    assert (table["ST_sd_model"] > 0).all()
    assert np.allclose(table["ST_mean_fn"], table["ST"], atol=0.05)


@pytest.mark.slow
def test_gp_on_200_points_g_function_intervals_contain_the_truth():
    # Indices below ~0.01 can be smoothed away by the fitted length-scales (the intervals
    # condition on them): those are checked to 0.01 absolute.
    space = g_space()
    X = unit_sample("sobol", space.dims, 200, seed=1)[:200]
    gp = GPSurrogate(GPSettings(log_transform=False, restarts=0), space.dims, 0)
    gp.fit(space.encode(X), g_function(space)(X), seed=1)
    s1, st = g_truth()
    table = surrogate_indices(gp, space.encode, space, n=512, paths=16, seed=1).table
    big = st > 0.02
    assert inside(table, "S1", s1)[big].all() and inside(table, "ST", st)[big].all()
    assert inside(table, "S1", s1, slack=0.01).all() and inside(table, "ST", st, slack=0.01).all()
    assert table.sort_values("rank")["parameter"].tolist()[:3] == ["x1", "x2", "x3"]


@pytest.mark.parametrize("domain", ["box", "valid"])
def test_a_function_that_is_nan_somewhere_is_refused(domain):
    space = Space([Ordinal("a", (1, 2, 3)), Ordinal("b", (1, 2, 3, 4))])

    def failed_once(index):
        cols = space.columns(index)
        a, b = np.asarray(cols["a"], float), np.asarray(cols["b"], float)
        return np.where((a == 3) & (b == 4), np.nan, a + 10 * b)  # every index was 0

    with pytest.raises(ConfigError, match="NaN or infinite"):
        sobol_indices(failed_once, space, n=64, domain=domain)


@pytest.mark.parametrize("domain", ["box", "valid"])
@pytest.mark.parametrize(
    ("returned", "said"),
    [
        (lambda index: np.ones(3), "returned 3 values for"),
        (lambda index: 1.0, "returned a scalar for"),
        (lambda index: np.ones((len(index), 2)), "returned an array of shape ("),
    ],
)
def test_a_function_not_giving_one_value_per_row_is_a_config_error(domain, returned, said):
    """It once failed inside SALib ("could not broadcast input array from shape (0,)")."""
    space = Space([IntRange("a", 1, 8), IntRange("b", 1, 4)], constraints=["a * b <= 16"])
    with pytest.raises(ConfigError, match="one value per row") as caught:
        sobol_indices(returned, space, n=16, domain=domain)
    assert said in str(caught.value) and "rows of the index matrix" in str(caught.value)


def test_a_column_of_values_is_one_value_per_row():
    space = Space([IntRange("a", 1, 8), IntRange("b", 1, 4)])
    column = sobol_indices(lambda index: index[:, :1] * 2.0, space, n=16, bootstrap=0)
    flat = sobol_indices(lambda index: index[:, 0] * 2.0, space, n=16, bootstrap=0)
    pd.testing.assert_frame_equal(column.table, flat.table)


def test_a_path_sampler_of_the_wrong_shape_is_a_config_error():
    class Short:
        n_paths, label = 2, "paths"

        def __call__(self, index: np.ndarray) -> np.ndarray:
            return np.ones((1, len(index)))

    space = Space([IntRange("a", 1, 8), IntRange("b", 1, 4)])
    for domain in ("box", "valid"):
        with pytest.raises(ConfigError, match=r"shape \(1, \d+\).*\(2, \d+\) \(n_paths, rows\)"):
            sobol_indices(Short(), space, n=16, domain=domain)
