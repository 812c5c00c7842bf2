import numpy as np

from gpautotune.surrogate import ForestSurrogate


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A step in the first input (low below 0.5), noise in the other two."""
    rng = np.random.default_rng(seed)
    X = rng.random((80, 3))
    return X, np.where(X[:, 0] < 0.5, -1.0, 1.0) + 0.01 * rng.standard_normal(80)


def test_the_forest_follows_a_threshold_and_repeats_with_its_seed():
    X, z = _data()
    grid = np.column_stack([np.linspace(0, 1, 21), np.full(21, 0.5), np.full(21, 0.5)])
    mean, sd = ForestSurrogate(seed=3).fit(X, z).predict(grid)
    assert np.all(mean[:8] < -0.8) and np.all(mean[-8:] > 0.8)
    assert sd.shape == (21,) and np.all(sd >= 0)
    assert sd[10] > sd[0]  # the trees disagree where the step is
    again = ForestSurrogate(seed=3).fit(X, z).predict(grid)
    other = ForestSurrogate(seed=4).fit(X, z).predict(grid)
    assert np.array_equal(again[0], mean) and np.array_equal(again[1], sd)
    assert not np.array_equal(other[0], mean)


def test_constant_data_gives_no_spread():
    X, _ = _data()
    mean, sd = ForestSurrogate(seed=0, trees=10).fit(X, np.full(len(X), 2.5)).predict(X[:5])
    assert np.allclose(mean, 2.5) and np.allclose(sd, 0)
