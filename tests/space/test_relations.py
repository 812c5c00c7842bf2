import numpy as np
import pytest

from gpautotune.space import Boolean, IntRange, PowerOfTwo, RowSet, Space, valid_set_relations

PARAMETERS = [
    PowerOfTwo("wg", 16, 128),
    PowerOfTwo("dim", 8, 32),
    PowerOfTwo("vw", 1, 8),
    IntRange("tile", 1, 8),
    Boolean("flag"),
]


def _table(keep: np.ndarray) -> tuple[Space, np.ndarray]:
    """The space whose valid set is the rows ``keep`` of the full grid (a membership
    predicate, as a replayed cache has), and those rows."""
    grid = Space(PARAMETERS).enumerate_index()
    rows = grid[keep]
    membership = RowSet(dict(Space(PARAMETERS).columns(rows)), label="row of the table")
    return Space(PARAMETERS, [membership]), rows


def _grid_mask(texts: list[str] | tuple[str, ...]) -> np.ndarray:
    grid = Space(PARAMETERS).enumerate_index()
    return Space(PARAMETERS, list(texts)).valid_mask(grid)


def test_the_relations_a_table_was_written_with_are_found_and_give_its_rows_back():
    written = ["wg % (dim * vw) == 0", "vw * tile <= 16"]
    space, rows = _table(_grid_mask(written))
    found = valid_set_relations(space, rows)
    assert sorted(found) == sorted(written)
    # read as predicates, they allow exactly the table's rows
    assert np.array_equal(_grid_mask(found), _grid_mask(written))


def test_a_lower_bound_on_a_quotient_is_found():
    written = ["wg / dim >= 4"]
    space, rows = _table(_grid_mask(written))
    assert valid_set_relations(space, rows) == ("wg / dim >= 4",)


def test_a_full_grid_and_a_random_subset_obey_no_relation():
    grid = Space(PARAMETERS).enumerate_index()
    space, rows = _table(np.ones(len(grid), dtype=bool))
    assert valid_set_relations(space, rows) == ()
    # a third of the grid drawn at random: a few extreme cells may all be missing by
    # chance, but too few for a relation to be kept
    for seed in range(5):
        keep = np.random.default_rng(seed).random(len(grid)) < 1 / 3
        space, rows = _table(keep)
        assert valid_set_relations(space, rows) == ()


def test_a_space_with_fewer_than_two_positive_numeric_parameters_has_none():
    space = Space([PowerOfTwo("wg", 16, 128), Boolean("flag")])
    assert valid_set_relations(space, space.enumerate_index()[:3]) == ()


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_too_few_rows_to_tell_give_no_relation(rows):
    space, table = _table(_grid_mask(["wg % (dim * vw) == 0"]))
    assert valid_set_relations(space, table[:rows]) == ()
