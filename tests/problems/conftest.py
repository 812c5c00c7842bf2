"""A device that can compile OpenCL (PoCL where it works), shared by the OpenCL problem tests."""

from __future__ import annotations

import pytest

from gpautotune.exceptions import DeviceError
from gpautotune.problems.opencl import DeviceInfo, select_device


@pytest.fixture(scope="session")
def cl_device() -> DeviceInfo:
    try:
        return select_device()
    except DeviceError as exc:
        pytest.skip(f"no OpenCL device can build kernels here: {exc}")
