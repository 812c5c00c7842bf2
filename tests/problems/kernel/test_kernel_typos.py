"""A misspelt ``tune_params`` name: warned of at set-up, its build errors led by the
compiler's error line, and the run stopped after its first identical build errors."""

from __future__ import annotations

import re
import shutil
import warnings
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.exceptions import EvaluationError
from gpautotune.problems import Status
from gpautotune.problems.kernel import c_kernel, opencl_kernel
from gpautotune.problems.kernel._build_log import build_error_text
from gpautotune.storage import Journal
from gpautotune.tuner import FIRST_BUILD_ERRORS, tune

#: gcc's message, with ASCII or typographic quotes (by locale).
UNDECLARED = r"error: .tile. undeclared"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

#: y = 2 x in tiles of ``tile`` elements.
TILED = """/* y = 2 x in tiles */
void scale(float *y, const float *x, int n) {
  for (int ii = 0; ii < n; ii += tile)
    for (int i = ii; i < ii + tile && i < n; i++) y[i] = 2.0f * x[i];
}
"""
ARGUMENTS = [
    {"name": "y", "zeros": "n"},
    {"name": "x", "random": "n"},
    {"name": "n", "value": "n"},
]


def _tiled(source, params, **kw):
    return c_kernel(
        str(source), "scale", ARGUMENTS, params, sizes={"n": 64}, answer={"y": "2 * x"}, **kw
    )


@pytest.fixture
def scale_c(tmp_path):
    path = tmp_path / "scale.c"
    path.write_text(TILED)
    return path


@needs_gcc
def test_a_misspelt_parameter_is_warned_of_with_the_name_meant(scale_c):
    with pytest.warns(UserWarning, match=r"tune_params 'tiel' occurs nowhere in scale\.c") as w:
        problem = _tiled(scale_c, {"tiel": [1, 2, 4]})
    problem.close()
    assert "did you mean 'tile'?" in str(w[0].message) and len(w) == 1


@needs_gcc
@pytest.mark.parametrize(
    "options",
    [
        {"defines": {"tile": "tiel * 2"}},  # the source's name, set from the parameter
        {"metrics": {"GB/s": "8 * n * tiel / time / 1e9"}},
    ],
)
def test_a_parameter_used_by_an_expression_is_not_warned_of(scale_c, options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _tiled(scale_c, {"tiel": [1, 2]}, **options).close()
        _tiled(scale_c, {"tile": [1, 2]}).close()  # in the source (a comment counts too)


def test_an_opencl_parameter_used_by_the_launch_only_is_not_warned_of(cl_device):
    source = "__kernel void k(__global float *y) { y[get_global_id(0)] = 1.0f; }"
    common = {
        "arguments": [{"name": "y", "zeros": "n"}],
        "sizes": {"n": 64},
        "platform": cl_device.platform_index,
        "device": cl_device.device_index,
        "probe_bandwidth": False,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opencl_kernel(source, "k", tune_params={"block_size_x": [32]}, problem_size="n", **common)
        opencl_kernel(
            source,
            "k",
            tune_params={"block_size_x": [32], "per": [1, 2]},
            problem_size="n",
            grid_div_x=["block_size_x", "per"],
            **common,
        )
    with pytest.warns(UserWarning, match=r"'per' occurs nowhere in the kernel source"):
        opencl_kernel(source, "k", tune_params={"per": [1, 2]}, problem_size="n", **common)


@needs_gcc
def test_a_build_error_leads_with_the_compilers_error_line(scale_c):
    with pytest.warns(UserWarning):
        problem = _tiled(scale_c, {"tiel": [1, 2]})
    try:
        m = problem.evaluate({"tiel": 2})
    finally:
        problem.close()
    assert m.status is Status.BUILD_ERROR
    lead, log = m.error.split("\n", 1)
    assert "error:" in lead and "tile" in lead and "scale.c:" in lead, m.error
    assert "In function" in log and lead in log  # the whole log is kept below it


@pytest.mark.parametrize(
    ("log", "lead"),
    [
        (
            "k.c: In function 'k':\nk.c:3:4: warning: unused\nk.c:5:1: error: 'tile' undeclared\n",
            "k.c:5:1: error: 'tile' undeclared",
        ),
        (
            "/usr/bin/ld: /tmp/ccX.o: in function `main':\nh.c:(.text+0x5c): undefined reference "
            "to `scal'\ncollect2: error: ld returned 1 exit status",
            "h.c:(.text+0x5c): undefined reference to `scal'",
        ),
        (
            '<kernel>:1:2: warning: "check"\n<kernel>:3:30: error: use of undeclared identifier',
            "<kernel>:3:30: error: use of undeclared identifier",
        ),
        ("k.c:1:1: fatal error: missing.h: No such file", None),  # already first
        ("the compiler crashed", None),  # no error line: as it is
    ],
)
def test_the_first_error_line_leads_the_log(log, lead):
    assert build_error_text(log) == (log if lead is None else f"{lead}\n{log}")


def test_an_opencl_build_error_leads_with_its_error_line():
    pytest.importorskip("pyopencl")
    from gpautotune.problems.kernel._opencl import OpenCLKernelRunner
    from gpautotune.problems.opencl import BuildFailure

    log = "<kernel>:1:2: warning: \"check\"\n<kernel>:3:30: error: use of undeclared 'tile'"

    def build(source, options):
        raise BuildFailure(log)

    runner = object.__new__(OpenCLKernelRunner)  # no device: only the build is asked
    runner.session = SimpleNamespace(builds=SimpleNamespace(build=build))
    runner.build_options = ""
    m = runner.kernel("source", {})
    assert m.status is Status.BUILD_ERROR
    assert m.error == f"<kernel>:3:30: error: use of undeclared 'tile'\n{log}"


@needs_gcc
def test_a_misspelt_parameter_stops_the_run_after_its_first_identical_build_errors(
    scale_c, tmp_path
):
    with pytest.warns(UserWarning):
        problem = _tiled(scale_c, {"tiel": list(range(1, 31))})
    db = tmp_path / "j.db"
    try:
        with pytest.raises(EvaluationError) as info:
            tune(problem, "random", 30, storage=db, seed=1)
    finally:
        problem.close()
    message = str(info.value)
    assert f"the first {FIRST_BUILD_ERRORS} configurations all failed to build" in message
    assert re.search(UNDECLARED, message) and "fix the kernel or its tune_params" in message
    assert "\n" not in message
    journal = Journal(db)
    trials = journal.trials(1)
    assert len(trials) == FIRST_BUILD_ERRORS  # every one measured is stored
    assert all(t.status is Status.BUILD_ERROR for t in trials)
    assert journal.get_run(1).status == "stopped"
    journal.close()


@needs_gcc
def test_the_command_line_warns_then_stops_in_one_line(scale_c, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "typo.yaml").write_text(
        "problem:\n  name: c-kernel\n  source: scale.c\n  kernel: scale\n  sizes: {n: 64}\n"
        "  arguments:\n    - {name: y, zeros: n}\n    - {name: x, random: n}\n"
        "    - {name: n, value: n, dtype: int32}\n"
        "  tune_params: {tiel: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n  answer: {y: '2 * x'}\n"
        "strategy: {name: random}\nbudget: 10\nseed: 1\n"
    )
    result = CliRunner().invoke(app, ["tune", "typo.yaml", "--db", "t.db"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    out = result.output.splitlines()
    assert any(x.startswith("warning: tune_params 'tiel'") and "'tile'" in x for x in out)
    errors = [x for x in out if x.startswith("error:")]
    assert len(errors) == 1 and re.search(UNDECLARED, errors[0]), result.output
    assert "with these trials stored" in errors[0]
