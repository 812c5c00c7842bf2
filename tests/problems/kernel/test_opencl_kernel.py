"""opencl-kernel on a real OpenCL device (PoCL here): every outcome is a status."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from gpautotune.execution import IsolatedEvaluator
from gpautotune.problems import Status, make_problem
from gpautotune.problems.kernel import OpenCLKernelProblem, opencl_kernel
from gpautotune.problems.opencl import REFUSED_METRIC

#: One kernel with a switch per failure: a wrong factor, a syntax error, a hang, and
#: local memory (in the kernel, in an argument) sized by parameters.
SOURCE = """
__kernel void scale(__global float *out, __global const float *x, const int n,
                    __local float *scratch) {
#if broken
  this is not OpenCL;
#endif
  __local float fixed[static_local];
  const int i = get_global_id(0), l = get_local_id(0);
  fixed[l % static_local] = i < n ? x[i] : 0.0f;
  scratch[l % lmem] = 1.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
#if hang
  volatile __global float *q = out;
  for (;;) { q[0] = q[1]; }
#endif
  if (i < n) out[i] = factor * fixed[l % static_local] * scratch[l % lmem];
}
"""
N = 1000
GOOD = {"factor": 2, "broken": 0, "hang": 0, "block_size_x": 32, "lmem": 16, "static_local": 64}
BIG = 1 << 19  # floats: 2 MiB, over PoCL's 1 MiB of local memory (PoCL aborts such a launch)


def _problem(cl_device, **kw) -> OpenCLKernelProblem:
    options = {
        "source": SOURCE,
        "kernel": "scale",
        "arguments": [
            {"name": "out", "zeros": "n"},
            {"name": "x", "random": "n"},
            {"name": "n", "value": "n"},
            {"name": "scratch", "local": "lmem"},
        ],
        "tune_params": {
            "factor": [2, 3],
            "broken": [0, 1],
            "hang": [0, 1],
            "block_size_x": [32, 8192],
            "lmem": [16, BIG],
            "static_local": [64, BIG],
        },
        "problem_size": "n",
        "sizes": {"n": N},
        "answer": {"out": "2 * x"},
        "metrics": {"GB/s": "2 * 4 * n / time / 1e9"},
        "objective": "GB/s",
        "iterations": 3,
        "platform": cl_device.platform_index,
        "device": cl_device.device_index,
        "probe_bandwidth": False,
        "timeout_s": 20,
        **kw,
    }
    return opencl_kernel(**options)


@pytest.fixture(scope="module")
def problem(cl_device):
    p = _problem(cl_device)
    yield p
    p.close()


def test_a_good_configuration_is_checked_and_timed(problem):
    m = problem.evaluate(GOOD)
    assert m.status is Status.OK, m.error
    assert m.metrics["max_abs_error"] == 0.0 and len(m.samples) == 3
    assert m.metrics["time_s"] == min(m.samples)
    assert m.value == pytest.approx(1 / m.metrics["GB/s"])
    assert m.metrics["global_size"] == [1024] and m.metrics["local_size"] == [32]
    assert m.metrics["kernel_max_work_group_size"] >= 32 and not m.metrics.get(REFUSED_METRIC)


def test_a_wrong_result_keeps_the_max_error(problem):
    m = problem.evaluate({**GOOD, "factor": 3})
    assert m.status is Status.WRONG_RESULT
    x = problem._runner.host["x"]
    assert m.metrics["max_abs_error"] == pytest.approx(float(x.max()), rel=1e-6)
    assert m.error.startswith("out: ") and "differ from the answer" in m.error


def test_a_build_error_keeps_the_compiler_log_with_source_lines(problem):
    m = problem.evaluate({**GOOD, "broken": 1})
    assert m.status is Status.BUILD_ERROR
    assert "'this'" in m.error and ":5:" in m.error  # line 5 of SOURCE, after the #defines


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"block_size_x": 8192}, "work group of 8192 items"),
        ({"lmem": BIG}, f"+ {4 * BIG} in arguments)"),
        ({"static_local": BIG}, "bytes of local memory"),
    ],
)
def test_launches_the_kernel_cannot_run_are_refused_before_launch(problem, change, says):
    m = problem.evaluate({**GOOD, **change})
    assert m.status is Status.INVALID and m.metrics[REFUSED_METRIC] is True
    assert m.error.startswith("refused before launch") and says in m.error
    assert "time_s" not in m.metrics
    assert problem.evaluate(GOOD).ok  # the process (and the device) survived


def test_a_configuration_outside_the_space_is_invalid(problem):
    m = problem.evaluate({**GOOD, "factor": 4})
    assert m.status is Status.INVALID and "factor" in m.error


def test_a_missing_kernel_is_a_build_error_naming_the_kernels(cl_device):
    source = SOURCE + "float nope(float a) { return a; }\n"  # not a __kernel: the build tells
    p = _problem(cl_device, source=source, kernel="nope")
    try:
        m = p.evaluate(GOOD)
    finally:
        p.close()
    assert m.status is Status.BUILD_ERROR and "'nope'" in m.error and "scale" in m.error


def test_registered_and_picklable_without_device_objects(problem, cl_device):
    problem.prepare()
    clone = pickle.loads(pickle.dumps(problem))
    assert clone._runner is None and clone.describe() == problem.describe()
    assert "opencl-kernel" in __import__("gpautotune").problems.available_problems()
    made = make_problem(
        "opencl-kernel",
        source=SOURCE,
        kernel="scale",
        arguments=[{"name": "out", "zeros": 4}],
        tune_params={"factor": [2]},
        problem_size=4,
        platform=cl_device.platform_index,
        device=cl_device.device_index,
    )
    assert isinstance(made, OpenCLKernelProblem) and made.space.size == 1


@pytest.mark.slow
def test_a_hung_kernel_costs_one_timeout(cl_device):
    problem = _problem(cl_device)
    evaluator = IsolatedEvaluator(timeout_s=4)
    try:
        hung = evaluator(problem, {**GOOD, "hang": 1}).measurement
        assert hung.status is Status.TIMEOUT
        after = evaluator(problem, GOOD).measurement
        assert after.status is Status.OK, after.error
        assert evaluator.workers_started == 2
    finally:
        evaluator.close()


def test_outputs_are_reset_before_every_check(cl_device):
    """An in-place kernel (x *= 2) checks right every time: arrays are uploaded afresh."""
    source = """
    __kernel void twice(__global float *x, const int n) {
      const int i = get_global_id(0);
      if (i < n) x[i] = 2.0f * x[i];
    }
    """
    x = np.linspace(0, 1, 999, dtype=np.float32)
    p = opencl_kernel(
        source,
        "twice",
        [{"name": "x", "random": "n"}, {"name": "n", "value": "n"}],
        {"block_size_x": [16, 32, 64]},
        "n",
        sizes={"n": x.size},
        answer={"x": "2 * x"},
        platform=cl_device.platform_index,
        device=cl_device.device_index,
        probe_bandwidth=False,
    )
    try:
        statuses = [p.evaluate({"block_size_x": b}).status for b in (16, 32, 16, 64)]
    finally:
        p.close()
    assert statuses == [Status.OK] * 4


def test_the_worker_start_up_limit_is_an_option(cl_device):
    """``startup_timeout_s`` (device context, data, probe) can be set from a file."""
    from gpautotune.config import Section, build_problem
    from gpautotune.exceptions import ConfigError

    options = dict(
        source=SOURCE,
        kernel="scale",
        arguments=[{"name": "out", "zeros": "n"}, {"name": "x", "random": "n"}]
        + [{"name": "n", "value": "n"}, {"name": "scratch", "local": "lmem"}],
        tune_params={"factor": [2], "broken": [0], "hang": [0], "block_size_x": [32]}
        | {"lmem": [16], "static_local": [64]},
        problem_size="n",
        sizes={"n": N},
        platform=cl_device.platform_index,
        device=cl_device.device_index,
        probe_bandwidth=False,
    )
    section = Section(name="opencl-kernel", startup_timeout_s=12.5, **options)
    evaluator = build_problem(section).default_evaluator()
    assert (evaluator.startup_timeout_s, evaluator.timeout_s) == (12.5, 60.0)
    with pytest.raises(ConfigError, match="startup_timeout_s=0"):
        opencl_kernel(**options, startup_timeout_s=0)
