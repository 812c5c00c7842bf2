"""The Laplacian runner on the shared OpenCL device (``cl_device``, tests/problems/conftest.py)."""

from __future__ import annotations

import pytest

from gpautotune.problems.laplacian import DeviceInfo, LaplacianRunner

#: Odd widths so that tiles and vectors leave tails at the right edge.
TEST_SIZES = ((37, 19), (29, 11))


@pytest.fixture(scope="module")
def runner(cl_device: DeviceInfo) -> LaplacianRunner:
    r = LaplacianRunner(cl_device, TEST_SIZES, repeats=2, probe_bandwidth=False)
    yield r
    r.close()
