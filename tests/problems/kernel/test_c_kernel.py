"""c-kernel: a user's C function compiled per configuration; every outcome is a status."""

from __future__ import annotations

import shutil

import pytest

from gpautotune.problems import Status
from gpautotune.problems.kernel import CKernelProblem, c_kernel

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

#: y = factor * x with an unrolled loop; switches for a syntax error, a hang and a crash.
SOURCE = """
void scale(float *y, const float *x, int n, float a) {
#if broken
  this is not C;
#endif
#if hang
  for (volatile int spin = 1; spin;) {}
#endif
#if crash
  y = 0;
  y[1 << 20] = 1.0f;
#endif
  for (int i = 0; i < n; i++) y[i] = factor * a * x[i];
}
"""
GOOD = {"factor": 2, "broken": 0, "hang": 0, "crash": 0}


@pytest.fixture(scope="module")
def problem():
    p = c_kernel(
        SOURCE,
        "scale",
        [
            {"name": "y", "zeros": "n"},
            {"name": "x", "arange": "n"},
            {"name": "n", "value": "n"},
            {"name": "a", "value": 0.5, "dtype": "float32"},
        ],
        {"factor": [2, 3], "broken": [0, 1], "hang": [0, 1], "crash": [0, 1]},
        sizes={"n": 1000},
        answer={"y": "x"},
        metrics={"GB/s": "8 * n / time / 1e9"},
        iterations=3,
        timeout_s=5,
    )
    yield p
    p.close()


def test_a_good_function_is_checked_and_timed(problem):
    m = problem.evaluate(GOOD)
    assert m.status is Status.OK, m.error
    assert m.metrics["max_abs_error"] == 0.0 and len(m.samples) == 3
    assert m.value == m.metrics["time_s"] == min(m.samples) and m.metrics["GB/s"] > 0
    assert "#define factor 2" in problem.source(GOOD) and "scale(gpautotune_arg0" in problem.source(
        GOOD
    )


def test_a_wrong_result_keeps_the_max_error(problem):
    m = problem.evaluate({**GOOD, "factor": 3})
    assert m.status is Status.WRONG_RESULT
    assert m.metrics["max_abs_error"] == pytest.approx(0.5 * 999)
    assert m.error.startswith("y: 999 of 1000 elements")


def test_a_build_error_keeps_the_compiler_log_with_source_lines(problem):
    m = problem.evaluate({**GOOD, "broken": 1})
    assert m.status is Status.BUILD_ERROR
    assert "kernel-source:4" in m.error and "this" in m.error


def test_a_crash_is_a_run_error(problem):
    m = problem.evaluate({**GOOD, "crash": 1})
    assert m.status is Status.RUN_ERROR and "signal" in m.error


@pytest.mark.slow
def test_a_hung_function_costs_one_timeout(problem):
    m = problem.evaluate({**GOOD, "hang": 1})
    assert m.status is Status.TIMEOUT and "exceeded 5 s" in m.error
    assert problem.evaluate(GOOD).ok


def test_local_buffers_are_refused_in_c():
    with pytest.raises(Exception, match="local buffers exist only in OpenCL"):
        c_kernel(SOURCE, "scale", [{"name": "s", "local": 4}], {"factor": [2]})


def test_c_problem_describes_its_compiler(problem):
    d = problem.describe()
    assert d["name"] == "c-kernel" and d["compiler"] == "gcc" and d["cflags"] == ["-O3"]
    assert isinstance(problem, CKernelProblem) and d["kernel"] == "scale"


def test_a_compiler_that_cannot_build_anything_is_refused_before_tuning(tmp_path):
    """Flags the compiler rejects fail every configuration: tune() stops at check(), one
    error naming the flags, before a run is opened."""
    from gpautotune.exceptions import ConfigError
    from gpautotune.tuner import tune

    broken = c_kernel(
        SOURCE,
        "scale",
        [{"name": "y", "zeros": "n"}, {"name": "x", "arange": "n"}, {"name": "n", "value": "n"}]
        + [{"name": "a", "value": 0.5, "dtype": "float32"}],
        {"factor": [2, 3], "broken": [0], "hang": [0], "crash": [0]},
        sizes={"n": 10},
        cflags=["-fno-such-flag"],
    )
    with pytest.raises(ConfigError, match="-fno-such-flag cannot build a program"):
        tune(broken, "random", 2, storage=tmp_path / "j.db")
    assert not (tmp_path / "j.db").exists()
    with pytest.raises(ConfigError, match="not on PATH"):
        c_kernel(SOURCE, "scale", [], {"factor": [2]}, compiler="no-such-cc")
