"""A user's set-up mistake in a kernel problem is one clear error before tuning (raised by
``check()``, which ``tune`` calls first), not a failure per trial."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status
from gpautotune.problems.kernel import c_kernel, opencl_kernel
from gpautotune.tuner import tune

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

VADD = """
__kernel void vadd(__global float *c, __global const float *a, __global const float *b,
                   const int n) {
  const int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""
VADD_ARGUMENTS = [
    {"name": "c", "zeros": "n"},
    {"name": "a", "random": "n"},
    {"name": "b", "random": "n"},
    {"name": "n", "value": "n"},
]
SCALE_C = "void scale(float *y, const float *x, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }"


def _vadd(cl_device, **kw):
    options = {
        "source": VADD,
        "kernel": "vadd",
        "arguments": VADD_ARGUMENTS,
        "tune_params": {"block_size_x": [32, 64]},
        "problem_size": "n",
        "sizes": {"n": 64},
        "answer": {"c": "a + b"},
        "platform": cl_device.platform_index,
        "device": cl_device.device_index,
        "probe_bandwidth": False,
        **kw,
    }
    return opencl_kernel(**options)


def _refused(problem, tmp_path, says):
    """``tune`` raises one ConfigError matching ``says`` and opens no run."""
    try:
        with pytest.raises(ConfigError, match=says):
            tune(problem, "random", 2, storage=tmp_path / "j.db", seed=0)
    finally:
        problem.close()
    assert not (tmp_path / "j.db").exists()


@pytest.mark.parametrize("problem_size", [0, -5, "n - n"])
def test_a_fixed_problem_size_below_one_is_refused_before_tuning(tmp_path, cl_device, problem_size):
    _refused(
        _vadd(cl_device, problem_size=problem_size),
        tmp_path,
        r"problem_size\[0\]: .* gives (0|-5), not a positive work size",
    )


def test_a_work_size_below_one_for_a_configuration_is_invalid(cl_device):
    problem = _vadd(cl_device, problem_size="n - block_size_x", answer=None)
    try:
        problem.check()  # the size depends on a parameter: no error for the set-up
        empty = problem.evaluate({"block_size_x": 64})
        assert empty.status is Status.INVALID and "not a positive work size" in empty.error
        assert problem.evaluate({"block_size_x": 32}).ok
    finally:
        problem.close()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"c": {"name": "c", "zeros": "m"}}, r"arguments.0 \(c\).zeros: negative extent"),
        ({"a": {"name": "a", "file": "no_such.npy"}}, r"arguments.1 \(a\).file: no file"),
        ({"b": {"name": "b", "random": "m + 4"}}, r"arguments.2 \(b\): an empty array"),
    ],
)
def test_arguments_that_cannot_be_made_are_one_error(tmp_path, cl_device, change, says):
    arguments = [change.get(a["name"], a) for a in VADD_ARGUMENTS]
    problem = _vadd(cl_device, arguments=arguments, sizes={"n": 64, "m": -4}, answer=None)
    _refused(problem, tmp_path, says)


def test_an_answer_that_cannot_be_computed_or_has_the_wrong_size_is_one_error(tmp_path, cl_device):
    def broken(arguments):
        raise ValueError("no reference here")

    _refused(_vadd(cl_device, answer=broken), tmp_path, "answer: .* ValueError: no reference")
    _refused(
        _vadd(cl_device, answer={"c": {"file": str(_saved(tmp_path))}}),
        tmp_path,
        "answer.c: 10 elements, but argument c has 64",
    )


def _saved(folder):
    np.save(folder / "ten.npy", np.zeros(10, dtype=np.float32))
    return folder / "ten.npy"


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (VADD_ARGUMENTS[:3], r"kernel vadd takes 4 arguments; 3 given \(c, a, b\)"),
        (
            [*VADD_ARGUMENTS, {"name": "m", "value": 3}],
            r"kernel vadd takes 4 arguments; 5 given \(c, a, b, n, m\)",
        ),
    ],
)
def test_a_wrong_number_of_kernel_arguments_is_one_error(tmp_path, cl_device, arguments, says):
    problem = _vadd(cl_device, arguments=arguments)
    try:
        wrong = problem.evaluate({"block_size_x": 32})  # without check(): each trial says why
        assert wrong.status is Status.RUN_ERROR and says.replace("\\", "") in wrong.error
    finally:
        problem.close()
    _refused(_vadd(cl_device, arguments=arguments), tmp_path, f"arguments: {says}")


def test_a_kernel_missing_from_the_source_is_an_error_at_set_up(cl_device):
    with pytest.raises(ConfigError, match=r"kernel: no function 'vad' in .*did you mean 'vadd'"):
        _vadd(cl_device, kernel="vad")


def test_a_kernel_missing_from_the_program_is_one_error(tmp_path, cl_device):
    source = VADD + "float add(float a, float b) { return a + b; }\n"  # not a __kernel
    problem = _vadd(cl_device, source=source, kernel="add")  # written there: the build tells
    _refused(problem, tmp_path, r"no kernel 'add' in the program .*vadd")


def test_a_good_set_up_passes_the_check(cl_device):
    problem = _vadd(cl_device)
    try:
        problem.check()
        assert problem.evaluate({"block_size_x": 32}).ok
    finally:
        problem.close()


@pytest.mark.filterwarnings("ignore:tune_params 'u' occurs nowhere")  # a stand-in parameter
@needs_gcc
@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ([{"name": "y", "zeros": "n"}, {"name": "x", "file": "no_such.npy"}], r"\(x\).file: no"),
        ([{"name": "y", "zeros": "m"}, {"name": "x", "random": "n"}], r"\(y\).zeros: negative"),
    ],
)
def test_c_arguments_that_cannot_be_made_are_one_error(tmp_path, arguments, says):
    problem = c_kernel(
        SCALE_C,
        "scale",
        [*arguments, {"name": "n", "value": "n"}],
        {"u": [1, 2]},
        sizes={"n": 8, "m": -4},
        answer={"y": "x"},
    )
    _refused(problem, tmp_path, says)


@pytest.mark.filterwarnings("ignore:tune_params 'u' occurs nowhere")  # a stand-in parameter
@needs_gcc
@pytest.mark.parametrize(
    ("x", "n", "dtype"),
    [
        (np.ones(8, dtype=np.float16), np.int32(8), "float16"),
        (np.ones(8, dtype=np.complex64), np.int32(8), "complex64"),
        (np.ones(8, dtype=np.float32), np.bool_(True), "bool"),
    ],
)
def test_c_arguments_without_a_c_type_are_one_error(tmp_path, x, n, dtype):
    problem = c_kernel(SCALE_C, "scale", [np.zeros(8, np.float32), x, n], {"u": [1, 2]})
    _refused(problem, tmp_path, rf"\(arg[12]\): dtype {dtype} has no C type; use one of \[")


def test_an_in_process_kernel_warns_of_crashes_and_hangs(cl_device):
    problem = _vadd(cl_device, answer=lambda args: [args[1] + args[2], None, None, None])
    try:
        with pytest.warns(UserWarning) as caught:
            problem.default_evaluator()
    finally:
        problem.close()
    message = str(caught[0].message)
    assert "crashes then ends the whole run" in message and "hangs cannot be stopped" in message
    assert "timeout_s (60 s) does not apply" in message


NO_GUARD = textwrap.dedent(
    """
    from gpautotune.execution import IsolatedEvaluator
    from gpautotune.problems import Problem
    from gpautotune.space import IntRange, Space

    class Squares(Problem):
        name = "squares"
        space = Space([IntRange("x", 0, 3)])

        def evaluate(self, config):
            return config["x"] ** 2

    evaluator = IsolatedEvaluator(timeout_s=60, startup_timeout_s=60)
    measurement = evaluator(Squares(), {"x": 2}).measurement
    evaluator.close()
    if not measurement.ok:  # the worker, which runs this again, stops here too
        raise SystemExit(f"ERROR: {measurement.error}")
    """
)


def test_a_script_without_a_main_guard_is_told_it_needs_one(tmp_path):
    """The worker runs the unguarded script again and dies while preparing: the error
    says what to add."""
    script = tmp_path / "no_guard.py"
    script.write_text(NO_GUARD)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    lines = [x for x in done.stderr.splitlines() if "the worker died" in x]
    assert lines, done.stderr
    assert all('needs an `if __name__ == "__main__":` guard' in x for x in lines), lines
