"""Launch limits: which launches are refused before they reach the device, and why."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpautotune.problems import Measurement, Status
from gpautotune.problems.opencl import REFUSED_METRIC, LaunchLimits, refused_launches
from gpautotune.problems.opencl.launch import fatal_launch_failures

LIMITS = LaunchLimits(
    work_group_size=256,
    kernel_local_bytes=1024,
    device_local_bytes=4096,
    max_work_item_sizes=(512, 128, 64),
)


@pytest.mark.parametrize("local", [(256,), (16, 16), (2, 2, 64), (128, 2, 1)])
def test_launches_within_the_limits_pass(local):
    assert LIMITS.refusal(local, dynamic_local_bytes=3072) is None


@pytest.mark.parametrize(
    ("local", "dynamic", "says"),
    [
        ((512,), 0, "512 items (512) exceeds the 256 this kernel allows"),
        ((32, 16), 0, "512 items (32x16) exceeds the 256"),
        ((1, 256), 0, "extent 256 in dimension 1 exceeds the device's 128"),
        ((64,), 3073, "4097 bytes of local memory (1024 in the kernel + 3073 in arguments)"),
    ],
)
def test_launches_over_a_limit_are_refused_with_the_reason(local, dynamic, says):
    assert says in LIMITS.refusal(local, dynamic_local_bytes=dynamic)


def test_refused_launches_are_counted_from_measurements_or_trials():
    refused = Measurement.failure(Status.INVALID, "refused", **{REFUSED_METRIC: True})
    other = Measurement.failure(Status.INVALID, "predicate")
    ok = Measurement.success(1.0)
    assert refused_launches([refused, other, ok, refused]) == 2
    assert (
        refused_launches([SimpleNamespace(measurement=refused), SimpleNamespace(measurement=ok)])
        == 1
    )


def test_the_kernels_limit_is_a_hint_where_failed_launches_are_not_fatal():
    hint = LaunchLimits(256, 0, 4096, (1024, 1024, 64), 1024, kernel_limit_is_hard=False)
    assert hint.refusal((32, 32)) is None  # tried: the driver may run it (NVIDIA does)
    assert "exceeds the device's 1024" in hint.refusal((64, 32))
    hard = LaunchLimits(256, 0, 4096, (1024, 1024, 64), 1024, kernel_limit_is_hard=True)
    assert "exceeds the 256 this kernel allows" in hard.refusal((32, 32))


@pytest.mark.parametrize(
    ("platform", "fatal"),
    [("Portable Computing Language", True), ("NVIDIA CUDA", False), ("Intel(R) OpenCL", False)],
)
def test_failed_launches_are_fatal_on_pocl_only(platform, fatal):
    device = SimpleNamespace(platform=SimpleNamespace(name=platform))
    assert fatal_launch_failures(device) is fatal
