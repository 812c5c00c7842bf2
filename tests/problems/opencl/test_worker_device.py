"""A process's own OpenCL device (Dask workers): GPAUTOTUNE_OPENCL_DEVICE."""

from __future__ import annotations

import dataclasses

import pytest

from gpautotune.exceptions import DeviceError
from gpautotune.problems.opencl import DEVICE_ENV, DeviceSession, assigned_device


def test_without_the_variable_the_problems_device_is_used(cl_device, monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    other = dataclasses.replace(cl_device, device_index=cl_device.device_index + 7)
    assert assigned_device(other) is other


@pytest.mark.parametrize("form", ["full", "device only"])
def test_the_variable_selects_the_device(cl_device, monkeypatch, form):
    text = f"{cl_device.platform_index}:{cl_device.device_index}"
    monkeypatch.setenv(DEVICE_ENV, text if form == "full" else str(cl_device.device_index))
    default = dataclasses.replace(cl_device, device_index=cl_device.device_index + 7)
    assert assigned_device(default) == cl_device


def test_a_device_of_another_model_is_refused(cl_device, monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, f"{cl_device.platform_index}:{cl_device.device_index}")
    default = dataclasses.replace(cl_device, device="Some Other GPU")
    with pytest.raises(DeviceError, match="Some Other GPU"):
        assigned_device(default)
    monkeypatch.setenv(DEVICE_ENV, "no-such-platform:0")
    with pytest.raises(DeviceError, match="no OpenCL device matches"):
        assigned_device(cl_device)


def test_a_session_opens_the_assigned_device_and_says_which(cl_device, monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, f"{cl_device.platform_index}:{cl_device.device_index}")
    session = DeviceSession(dataclasses.replace(cl_device, device_index=99))
    meta = session.metadata()
    assert session.info == cl_device
    assert meta["device_index"] == f"{cl_device.platform_index}:{cl_device.device_index}"
