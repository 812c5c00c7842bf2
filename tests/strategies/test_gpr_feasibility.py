import numpy as np

from gpautotune.problems import Measurement, Status
from gpautotune.space import IntRange, Space
from gpautotune.strategies._gpr_feasibility import (
    feasibility_model,
    likely_to_run,
    success,
    weigh,
)
from gpautotune.trial import Trial

SPACE = Space([IntRange("x", 0, 9), IntRange("y", 0, 9)])


def _trials(failing) -> list[Trial]:
    """A trial at every (x, y) of a coarse grid; those for which ``failing`` holds fail."""
    out = []
    for i, (x, y) in enumerate((x, y) for x in range(0, 10, 2) for y in range(0, 10, 2)):
        crash = Measurement.failure(Status.RUN_ERROR, "crash")
        out.append(Trial(i, {"x": x, "y": y}, crash if failing(x) else Measurement.success(1.0)))
    return out


def test_the_classifier_learns_where_configurations_fail():
    """Trials that fail where x is large teach the classifier a lower probability there."""
    model = feasibility_model(SPACE, _trials(lambda x: x >= 6))
    p = success(SPACE, SPACE.to_index([{"x": 1, "y": 5}, {"x": 9, "y": 5}]), model)
    assert p[0] > 0.5 > p[1]


def test_no_classifier_while_every_trial_ran_or_every_one_failed():
    assert feasibility_model(SPACE, _trials(lambda x: False)) is None
    assert feasibility_model(SPACE, _trials(lambda x: True)) is None
    assert success(SPACE, np.array([[1, 1]]), None) is None


def test_scores_are_weighed_by_the_probability_of_success():
    """EI is multiplied by P(success), log-EI shifted by its log, and LCB (no probability)
    loses the candidates more likely to fail than not."""
    scores, p = np.array([2.0, 2.0, -1.0]), np.array([1.0, 0.25, 0.5])
    assert weigh(scores, p, "ei").tolist() == [2.0, 0.5, -0.5]
    assert np.allclose(weigh(scores, p, "logei"), scores + np.log(p))
    assert weigh(scores, p, "lcb").tolist() == [2.0, -np.inf, -1.0]
    assert weigh(scores, None, "ei") is scores


def test_where_no_candidate_is_likely_to_run_all_are_kept():
    assert likely_to_run(np.array([0.1, 0.4])) is None
    assert likely_to_run(np.array([0.1, 0.6])).tolist() == [False, True]
