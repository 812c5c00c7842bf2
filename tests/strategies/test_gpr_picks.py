import numpy as np
import pytest

from gpautotune.strategies._gpr_picks import (
    AcquisitionScorer,
    StepPicks,
    StepPlan,
    scheduled,
    thompson_row,
)
from gpautotune.surrogate import GPSettings, GPSurrogate


def _fitted() -> GPSurrogate:
    """A GP fitted to a bowl over [0, 1]^2 with its minimum near (0.3, 0.6)."""
    rng = np.random.default_rng(0)
    X = rng.random((15, 2))
    y = 1.0 + (X[:, 0] - 0.3) ** 2 + (X[:, 1] - 0.6) ** 2
    gp = GPSurrogate(GPSettings(restarts=0), 2, 0)
    gp.fit(X, y, seed=0)
    return gp


def _features(rows: np.ndarray) -> np.ndarray:
    """Index rows of a 0..10 grid, as inputs on the unit square (no trend columns)."""
    return np.asarray(rows, dtype=float) / 10.0


GRID = np.array([(a, b) for a in range(11) for b in range(11)])


@pytest.mark.parametrize(
    ("every", "after", "budget", "steps"),
    [
        (3, 0.5, 30, [15, 18, 21, 24, 27]),  # from the budget's second half
        (3, 0.1, 30, [10, 13, 16, 19, 22, 25, 28]),  # never before the initial design
        (4, 0.5, None, [10, 14, 18, 22, 26]),  # no budget: from the initial design
        (None, 0.5, 30, []),
    ],
)
def test_scheduled_steps_come_every_k_steps_from_the_later_of_design_and_share(
    every, after, budget, steps
):
    assert [s for s in range(30) if scheduled(s, every, after, 10, budget)] == steps


def test_the_first_pick_records_the_rule_that_took_it():
    assert StepPlan("logei", 2.0, thompson=True).first_source("pool") == "thompson"
    assert StepPlan("logei", 2.0, forest=True).first_source("pool") == "forest"
    assert StepPlan("lcb", 10.0).first_source("poll") == "poll"


def test_a_step_counts_the_rows_it_scored_by_source():
    rows = np.zeros((5, 2))
    sources = np.array(["sample", "poll", "sample", "backlog", "sample"])
    picks = StepPicks(rows, np.zeros(5), sources, np.array([1]), [], np.empty((0, 2)))
    assert picks.source_counts() == {"backlog": 1, "poll": 1, "sample": 3}
    none = StepPicks(np.empty((0, 2)), np.empty(0), np.empty(0), np.array([]), [], rows[:0])
    assert none.source_counts() == {}


def test_a_portfolio_scoring_records_every_acquisition_and_returns_the_arm_s():
    """A recording scorer appends one column per acquisition for each call, from the same
    posterior as a scorer of that acquisition alone, and returns the ``arm``-th column; a
    plain scorer records nothing."""
    gp = _fitted()
    acquisitions = [("logei", 2.0), ("lcb", 2.0)]
    record: list[np.ndarray] = []
    never_fails = lambda rows: None  # noqa: E731
    both = AcquisitionScorer(acquisitions, gp.model, 1.0, _features, never_fails, 1, record, 1)
    out = np.concatenate([both(GRID[:60]), both(GRID[60:])])
    assert len(record) == 2 and [r.shape for r in record] == [(60, 2), (61, 2)]
    columns = np.vstack(record)
    for i, acquisition in enumerate(acquisitions):
        alone = AcquisitionScorer([acquisition], gp.model, 1.0, _features, never_fails, 1)
        assert np.allclose(alone(GRID), columns[:, i])
    assert np.array_equal(out, columns[:, 1])
    assert not np.allclose(columns[:, 0], columns[:, 1])


def test_scores_are_weighed_by_the_probability_of_success():
    """The scorer weighs each row's log-EI by its probability of running (its log added)."""
    gp = _fitted()
    p = np.where(GRID[:, 0] >= 5, 0.01, 1.0)
    scorer = AcquisitionScorer([("logei", 0.0)], gp.model, 1.0, _features, lambda r: p, 1)
    plain = AcquisitionScorer([("logei", 0.0)], gp.model, 1.0, _features, lambda r: None, 1)
    assert np.allclose(scorer(GRID), plain(GRID) + np.log(p))


def test_thompson_draws_are_seeded_and_leave_out_rows_likely_to_fail():
    """The same generator draws the same row; rows more likely to fail than not are never
    drawn while some row is likely to run."""
    gp = _fitted()
    scores = -np.abs(GRID[:, 0] - 3.0) - np.abs(GRID[:, 1] - 6.0)
    fails = GRID[:, 0] <= 4  # where the model's minimum lies

    def success_of(rows):
        return np.where(rows[:, 0] <= 4, 0.1, 0.9)

    picks = [
        thompson_row(gp.model, GRID, scores, np.random.default_rng(s), _features, success_of)
        for s in range(8)
    ]
    assert not fails[picks].any()
    again = thompson_row(gp.model, GRID, scores, np.random.default_rng(3), _features, success_of)
    assert again == picks[3]
