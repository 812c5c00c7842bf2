"""A random forest's mean and spread: the second model of ``forest_every`` steps.

SMAC (Hutter, Hoos & Leyton-Brown 2011, "Sequential model-based optimization for general
algorithm configuration") models configurations with a random forest and scores them by
expected improvement, the mean and the spread of its trees' predictions standing for a
posterior's mean and standard deviation. Trees split on one input at a time: they follow
thresholds, a code parameter's levels and interactions confined to a corner, which a
stationary kernel smooths over, so their errors are not the GP's. In the default's eight
traced trapped runs on the Kernel Tuner caches, at their last step, the forest ranked a
configuration under the bound among its ten best on four, where the run's own GP ranked
the best of them 275th to 3,679th, and ranked them lower than the GP on the other four;
as a second opinion in the runs it freed as many runs as it trapped
(docs/benchmarks/gpr-spaces.md, "Random-forest steps in the second half").

scikit-learn's ``RandomForestRegressor`` with SMAC's settings for algorithm configuration
(bootstrap samples, 5/6 of the inputs per split, at least 3 rows to split and 3 per
leaf); 100 trees, so that their spread is a smooth enough standard deviation.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestRegressor

__all__ = ["ForestSurrogate"]


class ForestSurrogate:
    """A random forest on the model's inputs, seeded: the same data and seed give the same
    predictions.

    Args:
        seed: seeds the bootstrap samples and the inputs drawn per split.
        trees: the number of trees.
    """

    def __init__(self, seed: int, trees: int = 100) -> None:
        self.forest = RandomForestRegressor(
            n_estimators=trees,
            min_samples_split=3,
            min_samples_leaf=3,
            max_features=5 / 6,
            bootstrap=True,
            random_state=seed,
            n_jobs=1,
        )

    def fit(self, X: np.ndarray, z: np.ndarray) -> ForestSurrogate:
        """Fit to model outputs ``z`` (lower is better) at inputs ``X``."""
        self.forest.fit(X, z)
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The trees' mean prediction at ``X`` and their standard deviation."""
        each = np.stack([tree.predict(X) for tree in self.forest.estimators_])
        return each.mean(axis=0), each.std(axis=0)
