from __future__ import annotations

import pytest

from gpautotune.problems import laplacian_replay


@pytest.fixture(scope="session")
def laplacian():
    """The seeds' K40c Laplacian table as a replay problem (read from ../shared/data)."""
    return laplacian_replay()


@pytest.fixture
def booth_yaml(tmp_path):
    """A tuning file: Booth with Sobol, 12 evaluations, journal ``b.db`` in ``tmp_path``."""
    path = tmp_path / "booth.yaml"
    path.write_text(
        "problem: {name: booth}\nstrategy: {name: sobol}\nbudget: 12\nseed: 2\n"
        f"storage: {tmp_path / 'b.db'}\n"
    )
    return path
