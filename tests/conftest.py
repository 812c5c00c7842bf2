from __future__ import annotations

import pytest

from gpautotune.problems import laplacian_replay


@pytest.fixture(scope="session")
def laplacian():
    """The seeds' K40c Laplacian table as a replay problem (read from ../shared/data)."""
    return laplacian_replay()
