"""A device that can compile OpenCL (PoCL where it works), shared by the Laplacian tests."""

from __future__ import annotations

import pytest

from gpautotune.exceptions import DeviceError
from gpautotune.problems.laplacian import DeviceInfo, LaplacianRunner, select_device

#: Odd widths so that tiles and vectors leave tails at the right edge.
TEST_SIZES = ((37, 19), (29, 11))


@pytest.fixture(scope="session")
def cl_device() -> DeviceInfo:
    try:
        return select_device()
    except DeviceError as exc:
        pytest.skip(f"no OpenCL device can build kernels here: {exc}")


@pytest.fixture(scope="module")
def runner(cl_device: DeviceInfo) -> LaplacianRunner:
    r = LaplacianRunner(cl_device, TEST_SIZES, repeats=2, probe_bandwidth=False)
    yield r
    r.close()
