"""OpenCL platforms and devices: listing, selection by name or index, the ICD folder.

Selection is by case-insensitive substring of the platform (or vendor) and device name,
or by index. An ``OCL_ICD_VENDORS`` folder set by the user is the list of drivers: the
PoCL that the pyopencl wheel's loader adds from its own folder is left out unless the
folder names a PoCL driver too. A missing runtime or device raises
:class:`~gpautotune.exceptions.DeviceError` whose message says how to install PoCL, a
CPU OpenCL that works everywhere.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpautotune.exceptions import DeviceError

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = [
    "DEVICE_ENV",
    "DeviceInfo",
    "assigned_device",
    "list_devices",
    "select_device",
    "usable_device",
    "open_device",
    "compiler_problem",
    "INSTALL_HINT",
    "COMPILER_HINT",
    "register_icd",
    "NVIDIA_OPENCL_LIBRARY",
    "INTEL_CPU_LIBRARY",
    "KNOWN_LIBRARIES",
]

_log = logging.getLogger(__name__)
#: The folder :func:`register_icd` put in ``OCL_ICD_VENDORS`` in this process, if any.
_REGISTERED_FOLDER: list[str | None] = [None]

INSTALL_HINT = (
    "install an OpenCL runtime with `pip install pyopencl pocl-binary-distribution`"
    " (PoCL, CPU OpenCL)"
)
#: What to try when a device is listed but cannot compile (PoCL 3.0's LLVM 14 does not
#: know recent CPUs and fails with "unknown target CPU 'generic'").
COMPILER_HINT = (
    "choose another device (`gpautotune devices`), or install a CPU OpenCL that knows this"
    " CPU, e.g. `pip install intel-opencl-rt` (found automatically in this environment's"
    " lib/ folder)"
)
#: The environment variable that gives a process (a Dask worker) its own OpenCL device:
#: ``PLATFORM:DEVICE`` (name substrings or indices, e.g. ``nvidia:1``), or ``DEVICE``
#: within the platform of the problem's device.
DEVICE_ENV = "GPAUTOTUNE_OPENCL_DEVICE"
#: Where NVIDIA's container runtime mounts its OpenCL driver.
NVIDIA_OPENCL_LIBRARY = "/usr/local/nvidia/lib64/libnvidia-opencl.so.1"
#: Where ``pip install intel-opencl-rt`` puts Intel's CPU OpenCL driver.
INTEL_CPU_LIBRARY = str(Path(sys.prefix) / "lib" / "libintelocl.so")
#: Drivers :func:`register_icd` looks for by default.
KNOWN_LIBRARIES = (NVIDIA_OPENCL_LIBRARY, INTEL_CPU_LIBRARY)


@dataclass(frozen=True)
class DeviceInfo:
    """One OpenCL device, as ``gpautotune devices`` shows it."""

    platform_index: int
    device_index: int
    platform: str
    platform_version: str
    vendor: str
    device: str
    device_type: str
    device_version: str
    driver_version: str
    compute_units: int
    max_work_group_size: int
    global_memory_bytes: int

    def label(self) -> str:
        return f"[{self.platform_index}:{self.device_index}] {self.platform} / {self.device}"


def _platforms() -> list[cl.Platform]:
    register_icd()
    try:
        import pyopencl as cl
    except ImportError as exc:
        raise DeviceError(f"PyOpenCL is not importable ({exc}); {INSTALL_HINT}") from None
    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:
        raise DeviceError(f"no OpenCL platform found ({exc}); {INSTALL_HINT}") from None
    vendors = os.environ.get("OCL_ICD_VENDORS")
    if vendors and vendors != _REGISTERED_FOLDER[0] and not _names_pocl(Path(vendors)):
        # The pyopencl wheel's loader also reads its own folder, where the PoCL wheel's
        # driver is: a folder the user chose without PoCL in it means without PoCL.
        platforms = [p for p in platforms if "pocl" not in p.vendor.lower()]
        where = (
            f"OCL_ICD_VENDORS={vendors} names no usable driver (the PoCL bundled with "
            "pyopencl counts only when an .icd file there names it)"
        )
    else:
        where = INSTALL_HINT
    if not platforms:
        raise DeviceError(f"no OpenCL platform found; {where}")
    return platforms


def _names_pocl(vendors: Path) -> bool:
    """Whether an ICD folder (or a single ``.icd`` file) names a PoCL driver."""
    files = [vendors] if vendors.is_file() else sorted(vendors.glob("*.icd"))
    for icd in files:
        try:
            if "pocl" in icd.read_text(errors="replace").lower():
                return True
        except OSError:
            continue
    return False


def _devices(platform: cl.Platform) -> list[cl.Device]:
    import pyopencl as cl

    try:
        return platform.get_devices()
    except cl.Error:  # a platform without devices raises DEVICE_NOT_FOUND
        return []


def _info(pi: int, di: int, platform: cl.Platform, device: cl.Device) -> DeviceInfo:
    import pyopencl as cl

    return DeviceInfo(
        pi,
        di,
        platform.name.strip(),
        platform.version.strip(),
        platform.vendor.strip(),
        device.name.strip(),
        cl.device_type.to_string(device.type),
        device.version.strip(),
        device.driver_version.strip(),
        int(device.max_compute_units),
        int(device.max_work_group_size),
        int(device.global_mem_size),
    )


def list_devices() -> list[DeviceInfo]:
    """Every device of every OpenCL platform (raises :class:`DeviceError` when there is none)."""
    found = [
        _info(pi, di, p, d) for pi, p in enumerate(_platforms()) for di, d in enumerate(_devices(p))
    ]
    if not found:
        raise DeviceError(f"OpenCL platforms exist but have no device; {INSTALL_HINT}")
    return found


def _matches(value: str | int | None, index: int, *names: str) -> bool:
    if value is None:
        return True
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return index == int(value)
    return any(value.lower() in n.lower() for n in names)


def compiler_problem(info: DeviceInfo) -> str | None:
    """Why the device cannot build a trivial kernel (its build log), or ``None`` when it can."""
    import pyopencl as cl

    from gpautotune.problems.opencl.build import BuildCache, BuildFailure

    dev = open_device(info)
    try:
        BuildCache(cl.Context([dev]), dev).build(
            "__kernel void probe(__global int *a) { a[0] = 1; }"
        )
    except BuildFailure as exc:
        return exc.log
    except cl.Error as exc:
        return str(exc)
    return None


def select_device(platform: str | int | None = None, device: str | int | None = None) -> DeviceInfo:
    """The first device whose platform and device match (substring of name, or index).

    With neither given, the first GPU if there is one, else the first device, skipping
    devices whose compiler fails on a trivial kernel. An index for ``device`` counts
    within the matching platform(s).

    Raises:
        DeviceError: nothing matches (the message lists the devices there are).
    """
    every = list_devices()
    on_platform = [d for d in every if _matches(platform, d.platform_index, d.platform, d.vendor)]
    picked = [d for i, d in enumerate(on_platform) if _matches(device, i, d.device)]
    if platform is None and device is None:
        picked = [d for d in picked if "GPU" in d.device_type] + [
            d for d in picked if "GPU" not in d.device_type
        ]
        working = next((d for d in picked if compiler_problem(d) is None), None)
        if working is None:
            raise DeviceError(
                f"no OpenCL device can build a kernel ({'; '.join(d.label() for d in every)}); "
                f"{COMPILER_HINT}"
            )
        return working
    if not picked:
        listing = "; ".join(d.label() for d in every)
        raise DeviceError(
            f"no OpenCL device matches platform={platform!r} device={device!r}; "
            f"available: {listing}"
        )
    return picked[0]


def usable_device(platform: str | int | None = None, device: str | int | None = None) -> DeviceInfo:
    """:func:`select_device`, and a named device must also build a trivial kernel.

    Raises:
        DeviceError: nothing matches, or the named device cannot compile (with the log's
            first line and what to try instead).
    """
    info = select_device(platform, device)
    problem = compiler_problem(info) if platform is not None or device is not None else None
    if problem is not None:
        raise DeviceError(
            f"{info.label()} cannot build OpenCL kernels: {problem.splitlines()[0]}; "
            f"{COMPILER_HINT}"
        )
    return info


def assigned_device(default: DeviceInfo) -> DeviceInfo:
    """The device this process measures on: ``default`` (the problem's), or the one
    :data:`DEVICE_ENV` selects, which must be the same model (a run's key names one
    device model; each worker of a multi-GPU run has its own device of that model).

    Raises:
        DeviceError: the selector matches nothing, or a device of another model.
    """
    text = os.environ.get(DEVICE_ENV, "").strip()
    if not text:
        return default
    platform, sep, device = text.rpartition(":")
    info = select_device(platform if sep else default.platform_index, device)
    if info.device != default.device:
        raise DeviceError(
            f"{DEVICE_ENV}={text!r} selects {info.label()}, but the run measures "
            f"{default.device!r}: give this worker a device of that model"
        )
    return info


def open_device(info: DeviceInfo) -> cl.Device:
    """The ``pyopencl.Device`` of a :class:`DeviceInfo` (same indices, same name)."""
    platforms = _platforms()
    try:
        dev = _devices(platforms[info.platform_index])[info.device_index]
    except IndexError:
        raise DeviceError(f"device {info.label()} is gone; run `gpautotune devices`") from None
    if dev.name.strip() != info.device:
        raise DeviceError(f"device {info.label()} is now {dev.name.strip()!r}; select it again")
    return dev


def register_icd(*libraries: str, folder: str | os.PathLike[str] | None = None) -> str | None:
    """Point ``OCL_ICD_VENDORS`` at a folder of ``.icd`` files naming OpenCL drivers.

    For drivers the default ICD folder lacks: NVIDIA's in containers, or Intel's CPU
    runtime installed from PyPI (``pip install intel-opencl-rt``: its own ``.icd`` names a
    build-time path). The folder also gets copies of the system's ``/etc/OpenCL/vendors``
    files, so nothing listed before is hidden. Must run before the first OpenCL call of
    the process; :func:`list_devices` calls it with the known drivers.

    Args:
        libraries: driver libraries (default: NVIDIA's and the venv's Intel CPU runtime);
            those that do not exist are skipped.
        folder: where to write (default: ``<tmp>/gpautotune-icd``).

    Returns:
        The folder now in ``OCL_ICD_VENDORS``, or ``None`` when the variable was already
        set or no library exists.
    """
    found = [lib for lib in (libraries or KNOWN_LIBRARIES) if Path(lib).exists()]
    if os.environ.get("OCL_ICD_VENDORS") or not found:
        return None
    target = Path(folder) if folder is not None else Path(tempfile.gettempdir()) / "gpautotune-icd"
    target.mkdir(parents=True, exist_ok=True)
    system = Path("/etc/OpenCL/vendors")
    for icd in sorted(system.glob("*.icd")) if system.is_dir() else []:
        (target / icd.name).write_text(icd.read_text())
    for lib in found:
        (target / f"gpautotune-{Path(lib).name.split('.so')[0]}.icd").write_text(lib + "\n")
    os.environ["OCL_ICD_VENDORS"] = _REGISTERED_FOLDER[0] = str(target)
    _log.info("OCL_ICD_VENDORS=%s (naming %s)", target, ", ".join(found))
    return str(target)
