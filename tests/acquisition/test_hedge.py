import numpy as np
import pytest

from gpautotune.acquisition import PORTFOLIO, HedgeStep, draw
from gpautotune.acquisition._hedge import MIX, probabilities


def test_every_acquisition_keeps_its_share_of_the_draws():
    p = probabilities(np.array([0.0, 40.0, 1.0]))
    assert p.sum() == pytest.approx(1.0)
    assert p.min() == pytest.approx(MIX / len(PORTFOLIO))
    assert np.argmax(p) == 1
    level = probabilities(np.array([5.0, 5.0, 5.0]))
    np.testing.assert_allclose(level, 1 / 3)


def test_draws_follow_the_probabilities():
    rng = np.random.default_rng(0)
    gains = np.array([0.0, 1.0, 2.0])
    counts = np.bincount([draw(gains, rng) for _ in range(6000)], minlength=3) / 6000
    np.testing.assert_allclose(counts, probabilities(gains), atol=0.02)


def test_a_step_record_round_trips():
    step = HedgeStep(2, [0.5, -1.25, 3.0], [[1.0, 0.0], [2.0, 3.0], [0.0, 4.0]])
    assert HedgeStep.of(step.info()) == step
    assert HedgeStep.of(None) is None
