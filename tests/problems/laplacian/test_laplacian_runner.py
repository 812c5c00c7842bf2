"""Generated kernels on a real OpenCL device (PoCL or another CPU OpenCL), tiny images."""

from __future__ import annotations

import dataclasses

import pytest

from gpautotune.problems import Status
from gpautotune.problems.laplacian import generate_kernel
from gpautotune.problems.opencl import REFUSED_METRIC

# (vector_length, load_overlap, x components, y components, temporary_size, threads, lws_y,
# vector_recompute): every width, both load modes, tails (x not a multiple of the width),
# y from 1 to 6; without vector_recompute, tiles that end inside their last vector (tail
# stores, window lanes past the window) for every width above 1.
SPREAD = [
    (1, True, 3, 1, 4, 256, 1, True),
    (1, False, 4, 2, 2, 32, 32, True),
    (2, True, 3, 3, 2, 64, 2, True),
    (2, False, 1, 6, 4, 128, 8, True),
    (4, True, 4, 5, 4, 32, 1, True),
    (4, False, 3, 2, 2, 1024, 4, True),
    (8, True, 2, 4, 2, 64, 64, True),
    (8, False, 1, 3, 4, 64, 2, True),
    (16, True, 1, 1, 2, 32, 1, True),
    (16, False, 3, 2, 4, 512, 16, True),
    (2, True, 3, 2, 2, 64, 2, False),
    (2, False, 3, 1, 4, 32, 1, False),
    (4, True, 3, 3, 4, 128, 4, False),
    (4, False, 1, 2, 2, 64, 8, False),
    (4, False, 2, 4, 2, 32, 2, False),
    (8, True, 3, 1, 2, 256, 1, False),
    (8, False, 3, 5, 4, 64, 4, False),
    (16, True, 2, 2, 2, 32, 1, False),
    (16, False, 3, 6, 4, 128, 2, False),
    (16, False, 4, 1, 2, 64, 16, False),
]


def _config(vl, lo, xc, yc, ts, tn, ly, recompute=True):
    return {
        "elements_number": xc * yc,
        "y_component_number": yc,
        "vector_length": vl,
        "temporary_size": ts,
        "load_overlap": lo,
        "threads_number": tn,
        "lws_y": ly,
        "vector_recompute": recompute,
    }


def _case_id(c: tuple) -> str:
    return f"vl{c[0]}-{'lo' if c[1] else 'win'}-x{c[2]}-y{c[3]}{'' if c[7] else '-tile'}"


@pytest.mark.parametrize("case", SPREAD, ids=_case_id)
def test_generated_kernels_match_the_reference(runner, case):
    kernel = generate_kernel(_config(*case))
    assert kernel.plan.total_x == (kernel.plan.vector_number * case[0] if case[7] else case[2])
    m = runner.measure(kernel)
    assert m.status is Status.OK, m.error
    assert m.value > 0 and len(m.samples) == runner.repeats * len(runner.images)
    assert len(m.metrics["kernel_times_s"]) == len(runner.images)
    assert "__kernel void laplacian" in m.metrics["source"]


def test_a_wrong_kernel_is_a_wrong_result(runner):
    kernel = generate_kernel(_config(*SPREAD[2]))
    broken = dataclasses.replace(kernel, source=kernel.source.replace("((short)9)", "((short)8)"))
    m = runner.measure(broken)
    assert m.status is Status.WRONG_RESULT
    assert "differ from the reference" in m.error


def test_a_broken_build_is_a_build_error_with_the_log(runner):
    kernel = generate_kernel(_config(*SPREAD[0]))
    broken = dataclasses.replace(
        kernel, source=kernel.source.replace("const int w =", "const int w = no_such_name +")
    )
    m = runner.measure(broken)
    assert m.status is Status.BUILD_ERROR
    assert "no_such_name" in m.error
    assert m.metrics["source"] == broken.source


def test_a_work_group_over_the_kernel_limit_is_refused_before_launch(runner):
    kernel = generate_kernel(_config(*SPREAD[0]))
    too_big = dataclasses.replace(kernel, local_size=(2 * runner.device.max_work_group_size, 1))
    m = runner.measure(too_big)
    assert m.status is Status.INVALID and m.metrics[REFUSED_METRIC] is True
    assert "refused before launch" in m.error and "kernel_times_s" not in m.metrics
    assert str(m.metrics["kernel_max_work_group_size"]) in m.error


def test_builds_are_cached_by_source(runner):
    kernel = generate_kernel(_config(*SPREAD[4]))
    first, second = runner.measure(kernel), runner.measure(kernel)
    assert (
        second.metrics["build_cached"]
        and second.metrics["build_time_s"] == first.metrics["build_time_s"]
    )
