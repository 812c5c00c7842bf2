import itertools

import numpy as np

from gpautotune.measurement import Measurement
from gpautotune.space import Categorical, IntRange, Space
from gpautotune.strategies._gpr_escape import (
    EscapePolls,
    far_from_best,
    least_covered,
    nearest_levels,
    one_parameter_moves,
    polled_counts,
)
from gpautotune.trial import Trial


def test_one_parameter_moves_are_every_valid_level_of_one_parameter_once():
    """The poll's moves are the valid configurations that differ from the row in exactly
    one parameter, at any level (not only the adjacent ones), each listed once."""
    space = Space([IntRange("a", 0, 5), IntRange("b", 0, 5), IntRange("c", 0, 2)], ["a + b <= 6"])
    row = np.array([1, 2, 1])
    moves = one_parameter_moves(space, row)
    expected = {
        (a, b, c)
        for a, b, c in itertools.product(range(6), range(6), range(3))
        if a + b <= 6 and sum(x != y for x, y in zip((a, b, c), row, strict=True)) == 1
    }
    assert len(moves) == len(expected)
    assert {tuple(int(v) for v in m) for m in moves} == expected


def test_nearest_levels_keep_every_level_of_a_categorical():
    """The nearest-level filter keeps the nearest unmeasured level on each side along an
    ordered parameter and every move along a categorical one (no order to be near in)."""
    space = Space(
        [Categorical("layout", ("a", "b", "c", "d")), IntRange("tile", 0, 7)], name="mixed"
    )
    row = np.array([1, 3])
    moves = np.array([[0, 3], [2, 3], [3, 3], [1, 0], [1, 1], [1, 5], [1, 7]])
    kept = nearest_levels(space, moves, row)
    assert kept.tolist() == [[0, 3], [2, 3], [3, 3], [1, 1], [1, 5]]


def test_polled_counts_count_one_parameter_moves_only():
    """An escape counts for the one parameter it moved; a move of two parameters (a poll
    from an older best) counts for neither."""
    space = Space([IntRange("a", 0, 3), IntRange("b", 0, 3), IntRange("c", 0, 3)])
    best = {"a": 1, "b": 1, "c": 1}
    escapes = [
        ({"a": 2, "b": 1, "c": 1}, best),
        ({"a": 0, "b": 1, "c": 1}, best),
        ({"a": 1, "b": 1, "c": 3}, best),
        ({"a": 3, "b": 3, "c": 1}, best),
    ]
    assert polled_counts(space, escapes).tolist() == [2, 0, 1]


def test_far_from_best_keeps_rows_that_differ_in_half_the_parameters():
    space = Space([IntRange(n, 0, 3) for n in "abc"])
    rows = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert far_from_best(space, rows, np.array([0, 0, 0])).tolist() == [False, False, True, True]


def test_a_coverage_escape_looks_in_the_least_measured_cell():
    """The coverage escape keeps the pool's rows in the two-parameter cell whose
    measurements fall furthest short of its share of the space."""
    space = Space([IntRange("a", 0, 2), IntRange("b", 0, 2), IntRange("c", 0, 1)])
    measured = np.array([[a, b, 0] for a in range(3) for b in range(3)])
    rows = np.array([[a, b, 1] for a in range(3) for b in range(3)])
    keep = least_covered(space, rows, measured, np.empty((0, 3)))
    # every (a, b) cell was measured once, as its share asks; no c = 1 cell was
    assert (rows[keep, 2] == 1).all() and len(set(rows[keep, 0])) == 1
    assert keep.sum() == 3
    again = least_covered(space, rows, np.vstack([measured, [0, 0, 1]]), np.empty((0, 3)))
    assert rows[again, 0].min() > 0  # the cell a = 0, c = 1 is measured now


def _trials(space: Space, rows: list[tuple[int, ...]], values: list[float]) -> list:
    configs = space.to_configs(np.array(rows))
    return [
        Trial(i, c, Measurement.success(v))
        for i, (c, v) in enumerate(zip(configs, values, strict=True))
    ]


def test_escape_polls_rotate_to_the_parameters_polled_least_since_the_best():
    """An escape polls the best's unmeasured one-parameter moves; once an escape since
    the best moved ``a``, the next polls only ``b`` (polled least); a measured move is
    never offered; with ``alternate_any`` the second escape since the best keeps only
    the nearest levels."""
    space = Space([IntRange("a", 0, 5), IntRange("b", 0, 5)], name="box")
    trials = _trials(space, [(2, 2), (4, 4), (0, 2)], [1.0, 5.0, 3.0])
    polls = EscapePolls(space, seed=0)

    def seen(rows: np.ndarray) -> np.ndarray:
        measured = {tuple(r) for r in space.to_index([t.config for t in trials]).tolist()}
        return np.array([tuple(r) in measured for r in rows.tolist()])

    moves, source = polls.moves(trials, trials, seen)
    assert source == "poll" and len(moves) == 9  # 5 levels of a and 5 of b, (0, 2) measured
    polls.positions.append(2)  # trial 2 escaped from the best along a
    moves, _ = polls.moves(trials, trials, seen)
    assert sorted(map(tuple, moves.tolist())) == [(2, b) for b in (0, 1, 3, 4, 5)]
    nearest = EscapePolls(space, seed=0, levels="alternate_any")
    nearest.positions.append(2)
    moves, _ = nearest.moves(trials, trials, seen)
    assert sorted(map(tuple, moves.tolist())) == [(2, 1), (2, 3)]  # b: the nearest levels
    assert not EscapePolls(space, seed=0, escape="far").far(2)
    far = EscapePolls(space, seed=0, escape="far")
    far.positions.append(2)
    assert far.far(3) and not far.far(2)
