"""Another device's Laplacian table replays under its own name."""

from __future__ import annotations

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import make_problem


def test_a_laplacian_table_is_named_by_its_label(laplacian):
    other = make_problem("laplacian-replay", label="laplacian-h100")
    assert other.name == "laplacian-h100" and laplacian.name == "laplacian-k40c"
    assert other.describe()["name"] == "laplacian-h100"
    assert other.data_digest() == laplacian.data_digest()  # the same rows, another name


@pytest.mark.parametrize("label", ["", "  ", 3])
def test_a_label_that_names_nothing_is_refused(label):
    with pytest.raises(ConfigError, match="label must be a non-empty text"):
        make_problem("laplacian-replay", label=label)
