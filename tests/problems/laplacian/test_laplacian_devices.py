"""Device listing, selection errors, the ICD folder helper."""

from __future__ import annotations

import os

import pytest

from gpautotune.exceptions import DeviceError, GPAutotuneError
from gpautotune.problems.laplacian import list_devices, register_icd, select_device
from gpautotune.problems.opencl.devices import INSTALL_HINT


def test_listing_names_the_selected_device(cl_device):
    labels = [d.label() for d in list_devices()]
    assert cl_device.label() in labels
    assert select_device(cl_device.platform_index, cl_device.device_index) == cl_device
    assert (
        select_device(cl_device.platform[:5].lower(), cl_device.device[:3]).platform
        == cl_device.platform
    )


def test_no_match_is_a_device_error_listing_what_exists(cl_device):
    with pytest.raises(DeviceError) as err:
        select_device("no-such-platform")
    assert isinstance(err.value, GPAutotuneError) and cl_device.label() in str(err.value)


def test_install_hint_names_pocl():
    assert "pip install pyopencl pocl-binary-distribution" in INSTALL_HINT


def test_register_icd_writes_a_vendor_file(tmp_path, monkeypatch):
    library = tmp_path / "libvendor-opencl.so.1"
    library.write_text("")
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    folder = register_icd(str(library), str(tmp_path / "missing.so"), folder=tmp_path / "icd")
    assert folder == os.environ["OCL_ICD_VENDORS"] == str(tmp_path / "icd")
    written = {p.name: p.read_text().strip() for p in (tmp_path / "icd").glob("gpautotune-*.icd")}
    assert written == {"gpautotune-libvendor-opencl.icd": str(library)}
    assert register_icd(str(library)) is None  # already set: left alone
    monkeypatch.delenv("OCL_ICD_VENDORS")
    assert (
        register_icd(str(tmp_path / "missing.so")) is None and "OCL_ICD_VENDORS" not in os.environ
    )
