"""Kernel descriptions without a device: parameters, arguments, geometry, answers, objective."""

from __future__ import annotations

import numpy as np
import pytest

from gpautotune.config import apply_overrides, import_object, validate_options
from gpautotune.exceptions import ConfigError
from gpautotune.problems.kernel import (
    Answer,
    compare_outputs,
    geometry,
    kernel_spec,
    space_from_tune_params,
)
from gpautotune.problems.kernel._arguments import parse_arguments
from gpautotune.problems.kernel._factories import opencl_kernel
from gpautotune.space import Boolean, Categorical, Ordinal, PowerOfTwo

SOURCE = "__kernel void k(__global float *out, __global const float *x, int n) {\n}\n"
FACTORY = "tests.problems.kernel.kernel_factories:ramp"


def _spec(**kw):
    base = {
        "kernel": "k",
        "source": SOURCE,
        "arguments": [{"name": "out", "zeros": "n"}, {"name": "x", "random": "n"}],
        "tune_params": {"block_size_x": [32, 64]},
        "sizes": {"n": 10},
    }
    return kernel_spec(**{**base, **kw})


def test_tune_params_become_typed_parameters():
    space = space_from_tune_params(
        {"bx": [64, 16, 32], "t": [1, 2, 3], "u": [1, 4, 16], "v": [True, False], "k": ["a", "b"]},
        ["bx * t <= 128"],
    )
    kinds = {p.name: type(p) for p in space.parameters}
    assert kinds == {"bx": Ordinal, "t": Ordinal, "u": Ordinal, "v": Boolean, "k": Categorical}
    assert space["bx"] == PowerOfTwo("bx", 16, 64)
    assert space["u"].scale == "log2" and space["t"].scale == "linear"
    assert space.violated({"bx": 64, "t": 3, "u": 1, "v": True, "k": "a"})


@pytest.mark.parametrize("params", [{}, {"bx": []}, {"bx": [1, 1]}])
def test_bad_tune_params_name_the_key(params):
    with pytest.raises(ConfigError, match="tune_params"):
        space_from_tune_params(params)


def test_generators_follow_sizes_dtypes_and_seeds(tmp_path):
    np.save(tmp_path / "w.npy", np.full((2, 3), 7, dtype=np.int16))
    spec = _spec(
        arguments=[
            {"name": "r", "random": ["n", "2 * n"]},
            {"name": "z", "zeros": "n", "dtype": "float64"},
            {"name": "o", "ones": 3, "dtype": "int32"},
            {"name": "a", "arange": ["2", "n // 5"], "dtype": "int64"},
            {"name": "n", "value": "n + 1"},
            {"name": "w", "file": str(tmp_path / "w.npy")},
        ]
    )
    values = spec.materialise()
    assert values["r"].shape == (10, 20) and values["r"].dtype == np.float32
    assert 0 <= values["r"].min() and values["r"].max() < 1
    assert values["z"].dtype == np.float64 and not values["z"].any()
    assert values["o"].tolist() == [1, 1, 1]
    assert values["a"].tolist() == [[0, 1], [2, 3]]
    assert values["n"] == 11 and isinstance(values["n"], np.int32)
    assert values["w"].dtype == np.int16 and values["w"].sum() == 42
    again = spec.materialise()
    assert np.array_equal(values["r"], again["r"])
    assert not np.array_equal(_spec(seed=1).materialise()["x"], _spec().materialise()["x"])


@pytest.mark.parametrize(
    ("argument", "says"),
    [
        ({"name": "a", "zeros": 3, "ones": 3}, "exactly one"),
        ({"name": "a"}, "exactly one"),
        ({"name": "a", "zeros": 3, "dtype": "complex64"}, "dtype"),
        ({"name": "a b", "zeros": 3}, "identifier"),
        ({"name": "a", "zeros": 3, "shape": 3}, "shape"),
    ],
)
def test_bad_arguments_name_their_position(argument, says):
    with pytest.raises(ConfigError, match=says) as err:
        parse_arguments([{"name": "ok", "zeros": 1}, argument])
    assert "arguments.1" in str(err.value)


def test_python_arguments_are_data_or_named_data():
    a = np.ones(3, dtype=np.float32)
    assert [x.name for x in parse_arguments([a, np.int32(3)])] == ["arg0", "arg1"]
    named = parse_arguments({"a": a, "n": np.int32(3), "b": {"zeros": 3}})
    assert [x.name for x in named] == ["a", "n", "b"] and named[2].spec.zeros == 3
    with pytest.raises(ConfigError, match="NumPy"):
        parse_arguments([3])


def test_a_factory_is_imported_only_with_the_opt_in():
    args = [{"name": "out", "zeros": "n"}, {"name": "x", "factory": FACTORY}]
    with pytest.raises(ConfigError) as err:
        _spec(arguments=args)
    message = str(err.value)
    assert "arguments.1.factory" in message and "--allow-imports" in message
    assert "\n" not in message
    values = _spec(arguments=args, allow_imports=True).materialise()
    assert values["x"].tolist() == list(range(10))


def test_import_object_checks_the_name():
    assert import_object("numpy:zeros", allowed=True) is np.zeros
    with pytest.raises(ConfigError, match="module:function"):
        import_object("numpy.zeros", allowed=True, key="k")
    with pytest.raises(ConfigError, match="cannot import"):
        import_object("numpy:no_such_thing", allowed=True)
    with pytest.raises(ConfigError, match="allow-imports"):
        import_object("numpy:zeros", allowed=False, key="problem.answer")


def test_a_file_cannot_opt_itself_in():
    with pytest.raises(ConfigError, match="cannot be set in a file"):
        validate_options(opencl_kernel, {"allow_imports": True}, "problem")


def test_overrides_set_nested_keys_as_yaml_values():
    data = {"problem": {"name": "x", "sizes": {"n": 1}}, "budget": 3}
    out = apply_overrides(data, ["problem.sizes.n=4096", "problem.device=NVIDIA", "seed=2"])
    assert out["problem"]["sizes"] == {"n": 4096} and out["problem"]["device"] == "NVIDIA"
    assert out["seed"] == 2 and data["problem"]["sizes"] == {"n": 1}
    with pytest.raises(ConfigError, match="KEY.PATH=VALUE"):
        apply_overrides(data, ["problem.sizes.n"])
    with pytest.raises(ConfigError, match="budget is not a mapping"):
        apply_overrides(data, ["budget.x=1"])


def test_geometry_follows_kernel_tuner_rules():
    shape = geometry(
        ["n", "m"],
        (["block_size_x", "tile"], "block_size_y * 2", None),
        None,
        ["n", "m", "block_size_x", "block_size_y", "tile"],
    )
    scope = {"n": 1000, "m": 30, "block_size_x": 16, "block_size_y": 4, "tile": 4}
    assert shape.sizes(scope) == ((16 * 16, 4 * 4), (16, 4))
    one = geometry("n", (None, None, None), None, ["n"])
    assert one.sizes({"n": 1000}) == ((1024,), (256,)) and one.block_defines({}) == {
        "block_size_x": 256
    }
    with pytest.raises(ConfigError, match="grid_div_y"):
        geometry("n", (None, "2", None), None, ["n"])
    with pytest.raises(ConfigError, match="unknown name 'q'"):
        geometry("q", (None, None, None), None, ["n"])


def test_an_image_filter_answer_is_the_valid_cross_correlation():
    rng = np.random.default_rng(0)
    image, weights = rng.random((7, 9)), rng.random((3, 5))
    values = {"out": np.zeros((5, 5)), "image": image, "filter": weights}
    got = Answer({"out": "correlate2d(image, filter)"}, list(values), allow_imports=False)
    direct = [[np.sum(image[i : i + 3, j : j + 5] * weights) for j in range(5)] for i in range(5)]
    assert np.allclose(got.expected(values, {})["out"], direct)


def test_answers_from_expressions_lists_and_functions():
    a, b = np.arange(4.0, dtype=np.float32).reshape(2, 2), np.eye(2, dtype=np.float32)
    values = {"c": np.zeros((2, 2), np.float32), "a": a, "b": b}
    expected = Answer({"c": "matmul(a, b) + n"}, list(values), ["n"], allow_imports=False)
    assert np.array_equal(expected.expected(values, {"n": 1})["c"], a + 1)
    listed = Answer([a, None, None], list(values), allow_imports=False)
    assert list(listed.expected(values, {})) == ["c"]
    called = Answer(lambda args: {"c": args[1] * 2}, list(values), allow_imports=False)
    assert np.array_equal(called.expected(values, {})["c"], 2 * a)
    with pytest.raises(ConfigError, match="allow-imports"):
        Answer("tests.problems.kernel.kernel_factories:doubled", ["c"], allow_imports=False)
    with pytest.raises(ConfigError, match="not an argument"):
        Answer({"d": "a"}, list(values), allow_imports=False)
    with pytest.raises(ConfigError, match="calling 'inv'"):
        Answer({"c": "inv(a)"}, list(values), allow_imports=False)
    with pytest.raises(ConfigError, match="neither a mapping"):
        Answer("a + b", list(values), allow_imports=True)
    stray = Answer(lambda args: {"d": args[1]}, list(values), allow_imports=False)
    with pytest.raises(ConfigError, match=r"returned \['d'\], not arguments"):
        stray.expected(values, {})
    imported = Answer(
        "tests.problems.kernel.kernel_factories:doubled", ["out", "x", "n"], allow_imports=True
    )
    x = np.arange(3.0)
    assert imported.expected({"out": x, "x": x, "n": 3}, {})["out"].tolist() == [0, 2, 4]


def test_compare_reports_the_largest_error_and_the_first_mismatch():
    ref = np.array([[1.0, 2.0], [3.0, 4.0]])
    ok = compare_outputs({"c": ref + 1e-7}, {"c": ref}, atol=1e-6, rtol=0)
    assert ok.mismatch is None and ok.max_abs_error == pytest.approx(1e-7)
    got = ref.copy()
    got[1, 0] += 0.5
    bad = compare_outputs({"c": got}, {"c": ref}, atol=1e-6, rtol=0)
    assert bad.max_abs_error == pytest.approx(0.5)
    assert "1 of 4 elements" in bad.mismatch and "(1, 0)" in bad.mismatch
    assert compare_outputs({"c": got}, {"c": ref}, atol=0, rtol=0.2).mismatch is None
    got[0, 0] = np.nan
    assert compare_outputs({"c": got}, {"c": ref}, atol=1, rtol=1).mismatch is not None


def test_objective_time_or_a_metric_to_maximise():
    spec = _spec(metrics={"GB/s": "8 * n / time / 1e9"}, objective="GB/s")
    metrics = spec.objective.evaluate(1e-6, spec.scope({"block_size_x": 32}))
    assert metrics == {"GB/s": pytest.approx(0.08)}
    assert spec.objective.value(1e-6, metrics) == pytest.approx(1 / 0.08)
    assert _spec().objective.value(2.5, {}) == 2.5
    with pytest.raises(ConfigError, match="neither 'time'"):
        _spec(objective="GFLOP/s")
    with pytest.raises(ConfigError, match="unknown name 'm'"):
        _spec(metrics={"x": "m / time"})


def test_defines_carry_parameters_and_expressions():
    spec = _spec(defines={"HALF": "n // 2", "SCALE": 1.5})
    assert spec.define_values({"block_size_x": 64}) == {"block_size_x": 64, "HALF": 5, "SCALE": 1.5}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"source": "missing.cl"}, "no file 'missing.cl'"),
        ({"kernel": "not a name"}, "kernel"),
        ({"sizes": {"block_size_x": 3}}, "share the names"),
        ({"sizes": {"n": 2.5}}, "whole number"),
        ({"iterations": 0}, "iterations"),
        ({"restrictions": ["block_size_y > 2"]}, "block_size_y"),
    ],
)
def test_bad_descriptions_name_the_key(change, says):
    with pytest.raises(ConfigError, match=says):
        _spec(**change)


def test_a_source_file_is_read_and_its_hash_identifies_the_run(tmp_path):
    path = tmp_path / "k.cl"
    path.write_text(SOURCE)
    first = _spec(source=str(path)).describe()
    path.write_text(SOURCE + "// edited\n")
    second = _spec(source=str(path)).describe()
    assert (
        first["source"] == str(path.resolve()) and first["source_sha256"] != second["source_sha256"]
    )


def test_a_kernel_on_one_line_is_code_and_a_missing_file_is_named(tmp_path):
    """Code with a line break or a brace (a one-line kernel) is the kernel itself; an
    existing file is read; anything else is a missing file, named, however long."""
    from gpautotune.problems.kernel._spec import read_source

    one_line = "__kernel void k(__global float* a) { a[0] = 1.0f; }"
    assert read_source(one_line) == (one_line, None)
    assert read_source("void k()\n{}") == ("void k()\n{}", None)
    path = tmp_path / "k{1}.cl"  # a file whose name holds a brace is still read
    path.write_text("__kernel void k() {}")
    assert read_source(str(path)) == ("__kernel void k() {}", str(path.resolve()))
    for missing in ("kernels/missing.cl", "x" * 400):
        with pytest.raises(ConfigError, match="source: no file"):
            read_source(missing)


def test_numpy_numbers_in_tune_params_are_ordered_python_numbers():
    """``2 ** np.arange(5, 9)`` and ``np.arange(...)`` (Kernel Tuner habits) are numbers."""
    space = space_from_tune_params(
        {
            "bx": 2 ** np.arange(5, 9),
            "t": np.arange(32, 257, 32),
            "f": np.array([0.5, 1.0, 2.0], dtype=np.float32),
            "v": [np.True_, np.False_],
        }
    )
    assert space["bx"] == PowerOfTwo("bx", 32, 256)
    assert isinstance(space["t"], Ordinal) and space["t"].levels == tuple(range(32, 257, 32))
    assert space["t"].scale == "log2" and isinstance(space["f"], Ordinal)
    assert {type(v) for v in space["t"].levels} == {int}
    assert {type(v) for v in space["f"].levels} == {float}
    assert isinstance(space["v"], Boolean)


def test_restrictions_may_be_one_string_or_functions():
    params = {"bx": [32, 64, 128]}
    for restrictions in ("bx > 32", lambda p: p["bx"] > 32, ["bx > 32"]):
        space = space_from_tune_params(params, restrictions)
        assert [c["bx"] for c in space.enumerate()] == [64, 128], restrictions
    spec = _spec(restrictions=lambda p: p["block_size_x"] > 32)
    assert [c["block_size_x"] for c in spec.space.enumerate()] == [64]
    with pytest.raises(ConfigError, match="restrictions: give a list of expression strings"):
        space_from_tune_params(params, 32)


@pytest.mark.parametrize(
    ("arguments", "answer", "says"),
    [
        ([{"name": "n", "value": "n"}], {"n": "n"}, "n is a scalar argument"),
        ([{"name": "s", "local": 4}], {"s": "1"}, "s is a local buffer"),
        ([np.int32(3)], [None, None, 3], "arg2 is a scalar argument"),
    ],
)
def test_an_answer_checks_array_arguments_only(arguments, answer, says):
    base = [{"name": "out", "zeros": "n"}, {"name": "x", "random": "n"}]
    with pytest.raises(ConfigError, match=f"answer: {says}; only array arguments"):
        _spec(arguments=base + arguments, answer=answer)
    spec = _spec(arguments=base + [{"name": "n", "value": "n"}], answer=lambda args: {"n": args[2]})
    with pytest.raises(ConfigError, match="answer function: n is a scalar argument"):
        spec.answer.expected(spec.materialise(), spec.sizes)


def test_a_work_size_below_one_is_refused():
    """An empty or negative range would launch nothing and be timed as fast: it is a
    ConfigError (an invalid configuration where a parameter takes part; check() refuses
    a size the sizes alone fix)."""
    shape = geometry("n - block_size_x", (None, None, None), None, ["n", "block_size_x"])
    assert shape.sizes({"n": 64, "block_size_x": 32}) == ((32,), (32,))
    with pytest.raises(ConfigError, match=r"problem_size\[0\]: 'n - block_size_x' gives 0, not"):
        shape.sizes({"n": 64, "block_size_x": 64})
    shape.check({"n": 64}, ["block_size_x"])  # depends on a parameter: per configuration
    fixed = geometry(["n", "m - n"], (None, None, None), None, ["n", "m"])
    with pytest.raises(ConfigError, match=r"problem_size\[1\]: 'm - n' gives -3, not a positive"):
        fixed.check({"n": 5, "m": 2}, [])
    fixed.check({"n": 5, "m": 6}, [])
