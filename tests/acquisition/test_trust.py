import numpy as np
import pytest

from gpautotune.acquisition import TrustRegion
from gpautotune.exceptions import ConfigError


def test_the_side_doubles_after_successes_and_halves_after_failures():
    rules = TrustRegion(failure=2, success=2)
    design = [5.0, 4.0]  # the best of the design (4.0) is the first to beat
    assert rules.length(design, 2) == pytest.approx(0.8)
    assert rules.length([*design, 3.0, 2.0], 2) == pytest.approx(1.6)
    assert rules.length([*design, 3.0, 2.0, 1.0, 0.5], 2) == pytest.approx(1.6)  # capped
    assert rules.length([*design, 4.5, 4.0], 2) == pytest.approx(0.4)  # ties do not improve
    # a miss breaks a run of successes, and a failed measurement (None) is a miss
    assert rules.length([*design, 3.0, None, 2.0], 2) == pytest.approx(0.8)
    assert rules.length([*design, None, None, None, None], 2) == pytest.approx(0.2)


def test_an_improvement_must_beat_the_best_by_the_tolerance():
    rules = TrustRegion(failure=1, success=1, tolerance=0.1)
    assert rules.length([10.0, 9.5], 1) == pytest.approx(0.4)  # 5% better: a miss
    assert rules.length([10.0, 8.0], 1) == pytest.approx(1.6)


def test_a_side_below_the_minimum_starts_again():
    rules = TrustRegion(failure=1, length_min=0.15)
    sides = [rules.length([1.0] + [2.0] * k, 1) for k in range(5)]
    assert sides == pytest.approx([0.8, 0.4, 0.2, 0.8, 0.4])


def test_the_failure_count_follows_the_dimension():
    assert TrustRegion.for_dims(2).failure == 4
    assert TrustRegion.for_dims(10).failure == 10


def test_inside_is_the_box_around_the_center():
    positions = np.array([[0.5, 0.5], [0.9, 0.5], [0.5, 0.1], [0.7, 0.3]])
    mask = TrustRegion.inside(positions, np.array([0.5, 0.5]), 0.4)
    assert mask.tolist() == [True, False, False, True]


@pytest.mark.parametrize(
    "rules", [{"failure": 0}, {"failure": 4, "success": 0}, {"failure": 4, "length_min": 0.0}]
)
def test_trust_region_rules_that_make_no_box_are_refused(rules):
    with pytest.raises(ConfigError, match="TrustRegion"):
        TrustRegion(**rules)
