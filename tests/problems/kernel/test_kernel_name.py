"""``kernel:`` names a function that the source must define: checked from the text at
set-up (before any build or device): a name written nowhere is an error with the closest
name defined, or a warning where a macro, an included file or the compiler options may
make it."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.config import build_problem, load_config
from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status
from gpautotune.problems.kernel import _c, _opencl, c_kernel, kernel_spec, opencl_kernel
from gpautotune.problems.kernel._usage import check_kernel_name

ROOT = Path(__file__).resolve().parents[3]
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

SCALE = """/* y = 2 x */
void scale(float *y, const float *x, int n) {
  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
}
"""
SCALE_ARGUMENTS = [
    {"name": "y", "zeros": "n"},
    {"name": "x", "random": "n"},
    {"name": "n", "value": "n"},
]
VADD = """
float add(float a, float b) { return a + b; }

__kernel void vadd(__global float *c, __global const float *a, __global const float *b,
                   const int n) {
  const int i = get_global_id(0);
  if (i < n) c[i] = add(a[i], b[i]);
}
"""
VADD_ARGUMENTS = [
    {"name": "c", "zeros": "n"},
    {"name": "a", "random": "n"},
    {"name": "b", "random": "n"},
    {"name": "n", "value": "n"},
]


@pytest.fixture
def no_device(monkeypatch):
    """The OpenCL problem's device: none looked for (the name is checked first)."""
    looked = []
    monkeypatch.setattr(_opencl, "usable_device", lambda *a: looked.append(a))
    return looked


def _vadd(source=VADD, kernel="vadd", **kw):
    options = {
        "tune_params": {"block_size_x": [32, 64]},
        "problem_size": "n",
        "sizes": {"n": 64},
        "answer": {"c": "a + b"},
        "probe_bandwidth": False,
        **kw,
    }
    return opencl_kernel(source, kernel, VADD_ARGUMENTS, **options)


def _scale(source=SCALE, kernel="scale", **kw):
    options = {"sizes": {"n": 64}, "answer": {"y": "2 * x"}, **kw}
    return c_kernel(source, kernel, SCALE_ARGUMENTS, {"u": [1, 2]}, **options)


def _check(source, kernel, *, opencl, options=(), tune_params=None):
    spec = kernel_spec(
        kernel=kernel,
        source=source,
        arguments=[{"name": "y", "zeros": 4}],
        tune_params=tune_params or {"u": [1, 2]},
    )
    check_kernel_name(spec, opencl=opencl, options=options)


@pytest.mark.filterwarnings("ignore:tune_params 'u' occurs nowhere")  # a stand-in parameter
def test_a_misspelt_c_function_is_an_error_before_anything_is_built(tmp_path, monkeypatch):
    (tmp_path / "scale.c").write_text(SCALE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_c, "Runner", None)  # nothing may be compiled
    says = "kernel: no function 'scael' in scale.c; functions there: scale (did you mean 'scale'?)"
    with pytest.raises(ConfigError, match=re.escape(says)):
        _scale("scale.c", "scael")


@pytest.mark.parametrize("comment", ["", "/* call it vad */\n", "// vad\n"])
def test_a_misspelt_opencl_kernel_is_an_error_before_the_device_is_opened(no_device, comment):
    says = (
        "kernel: no function 'vad' in the kernel source; functions there: vadd "
        "(did you mean 'vadd'?)"  # the __kernel functions only: not add
    )
    with pytest.raises(ConfigError, match=re.escape(says)):
        _vadd(comment + VADD, "vad")  # a name in a comment defines nothing
    assert no_device == []


def test_a_name_like_none_defined_gets_the_list_without_a_guess(no_device):
    with pytest.raises(ConfigError, match=r"no function 'main' in .*; functions there: vadd$"):
        _vadd(kernel="main")


@pytest.mark.parametrize(
    ("source", "options"),
    [
        ("#include <math.h>\n" + SCALE, ["-O3", "-march=native", "-fopenmp"]),
        ("#define TILE 4\n" + SCALE, ["-D", "N=4", "-DM"]),
    ],
)
def test_a_misspelt_c_function_is_an_error_despite_headers_and_options(source, options):
    with pytest.raises(ConfigError, match=r"no function 'scael' .*did you mean 'scale'\?\)$"):
        _check(source, "scael", opencl=False, options=options)


@pytest.mark.parametrize(
    ("source", "kernel", "options", "why"),
    [
        (  # the name is pasted together
            "#define NAME(t) vadd_##t\n__kernel void NAME(f32)(__global float *y) {}\n",
            "vadd_f32",
            (),
            r"paste names together \(##\)",
        ),
        (
            '#include "common.cl"\n__kernel void other(__global float *y) {}\n',
            "vadd",
            (),
            "an included file may define it",
        ),
        ("__kernel void other(__global float *y) {}\n", "vadd", ("-include", "k.h"), "options"),
    ],
)
def test_an_opencl_name_a_macro_or_other_code_may_make_is_warned_of_only(
    source, kernel, options, why
):
    with pytest.warns(UserWarning, match=rf"kernel: '{kernel}' occurs nowhere .*{why}"):
        _check(source, kernel, opencl=True, options=options)


@pytest.mark.parametrize(
    ("source", "options", "why"),
    [
        ('#include "impl.h"\nint other(void) { return 0; }\n', (), "an included file"),
        ("#include <impl.h>\n", ("-I", "include"), "an included file"),
        ("int other(void) { return 0; }\n", ("-O3", "impl.c"), "options bring in other code"),
        ("int other(void) { return 0; }\n", ("-limpl",), "options bring in other code"),
    ],
)
def test_a_c_name_other_code_may_define_is_warned_of_only(source, options, why):
    with pytest.warns(UserWarning, match=rf"kernel: 'scale' occurs nowhere .*{why}"):
        _check(source, "scale", opencl=False, options=options)


@pytest.mark.parametrize(
    ("source", "kernel", "options"),
    [  # a name written somewhere is left to the build (check() for OpenCL, the C stop)
        ("#define NAME vadd2\n__kernel void NAME(__global float *y) {}\n", "vadd2", ()),
        ("__kernel void NAME(__global float *y) {}\n", "vadd", ("-D", "NAME=vadd")),
        ("__kernel void k(__global float *y) {}\nvoid vadd(void) {}\n", "vadd", ()),
        ("void scale(float *y, int n);\n", "scale", ()),
        ("void FN(float *y) {}\n", "scale", ("-DFN=scale",)),
    ],
)
def test_a_name_the_source_or_options_write_passes_silently(source, kernel, options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(source, kernel, opencl=True, options=options)


@pytest.mark.parametrize(
    "source",
    [
        VADD,
        "__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void vadd(__global float *y) {}",
        "kernel void __attribute__((vec_type_hint(float4))) vadd(__global float *y) {}",
        "#define KERNEL __kernel\nKERNEL void vadd(__global float *y) {}\n",  # no kernel seen
    ],
)
def test_an_opencl_kernel_defined_passes_silently(source):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(source, "vadd", opencl=True, options=["-cl-fast-relaxed-math"])


@pytest.mark.parametrize(
    "source",
    [
        SCALE,
        "static inline float *\nscale (float *restrict y, int n)\n{\n  return y;\n}\n",
        'const char *s = "}{";\nstruct p { int a; };\nvoid scale(float *y) { y[0] = s[0]; }\n',
        "#if A\nvoid scale(float *y, int n) {\n#else\nvoid scale(float *y) {\n#endif\n}\n",
        "int is_quote(char c) { return c == '\"'; } "  # a quote that opens no string
        'const char *open = "/*"; void scale(float *y) { y[0] = open[0]; } /* end */\n',
    ],
)
def test_a_c_function_defined_passes_silently(source):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(source, "scale", opencl=False, options=["-O3", "-march=native", "-D", "X=1"])


@needs_gcc
@pytest.mark.filterwarnings("ignore:tune_params 'u' occurs nowhere")
def test_a_c_function_a_macro_defines_passes_and_runs():
    source = (
        "#define DEFINE_SCALE(name) \\\n"
        "  void name(float *y, const float *x, int n) { for (int i = 0; i < n; i++) "
        "y[i] = 2.0f * x[i]; }\n"
        "DEFINE_SCALE(scale)\n"
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="kernel:")
        problem = _scale(source)
    try:
        m = problem.evaluate({"u": 1})
    finally:
        problem.close()
    assert m.status is Status.OK, m.error


def test_an_opencl_kernel_a_macro_names_is_warned_of_and_runs(cl_device):
    source = VADD.replace("__kernel void vadd(", "__kernel void NAME(f32)(")
    source = "#define NAME(t) vadd_##t\n" + source
    device = {"platform": cl_device.platform_index, "device": cl_device.device_index}
    with pytest.warns(UserWarning, match=r"'vadd_f32' .*paste names together"):
        problem = _vadd(source, "vadd_f32", **device)
    try:
        problem.check()
        m = problem.evaluate({"block_size_x": 32})
    finally:
        problem.close()
    assert m.status is Status.OK, m.error


@pytest.mark.parametrize(
    "config",
    sorted(
        p.name for p in (ROOT / "configs" / "kernels").glob("*.yaml") if "compare" not in p.name
    ),
)
def test_the_example_configs_pass_the_check_silently(config, monkeypatch, no_device):
    data = (ROOT / "configs" / "kernels" / config).read_text()
    if "c-kernel" in data and shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    monkeypatch.chdir(ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_problem(load_config(f"configs/kernels/{config}").problem).close()


def test_the_command_line_refuses_a_misspelt_c_function_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = ["tune", "configs/kernels/transpose.yaml", "--db", str(tmp_path / "t.db")]
    result = CliRunner().invoke(app, [*args, "--set", "problem.kernel=transpos"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: kernel: no function 'transpos' in configs/kernels/transpose.c; functions there: "
        "min_int, transpose (did you mean 'transpose'?)"
    ]
    assert not (tmp_path / "t.db").exists()  # no run opened, nothing built
