"""Kernel declarations: space sizes against the specification, code generation for all."""

from __future__ import annotations

import math

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems.spapt import (
    KERNEL_NAMES,
    THESIS_KERNELS,
    count_valid_by_groups,
    get_kernel,
    list_kernels,
)
from gpautotune.problems.spapt._program import generate
from gpautotune.space import IntRange, Ordinal, Space

# Appendix A of docs/spapt-kernels.md: factors and raw sizes (adi with the thesis sets).
APPENDIX_A = {
    "atax": (18, 26547069911040000),
    "dgemv3": (49, 3881681992353068561203200000000000000),
    "gemver": (24, 25999348907114496000000),
    "gesummv": (11, 5374771200),
    "hessian": (9, 37324800),
    "mm": (13, 1289945088000),
    "mvt": (12, 1194393600),
    "tensor": (20, 12036735605145600000),
    "trmm": (25, 374390624262448742400000),
    "bicg": (13, 322486272000),
    "lu": (14, 9674588160000),
    "adi": (20, 6051657497760000),
    "jacobi": (11, 5374771200),
    "seidel": (15, 139314069504000),
    "stencil3d": (29, 9704204980882671403008000000),
    "correlation": (21, 451377585192960000),
    "fdtd": (30, 291126149426480142090240000000),
    "covariance": (25, 53375619130243200000),
}
# Valid sizes the specification gives exactly (section 3).
EXACT_VALID = {
    "atax": 185539945147200,
    "gemver": 11322153609344640000,
    "gesummv": 112161360,
    "hessian": 2446848,
    "mm": 10602733760,
    "mvt": 78811488,
    "bicg": 6729681600,
    "lu": 201890448000,
    "jacobi": 112161360,
}
# Valid sizes the specification gives to three digits.
APPROX_VALID = {
    "dgemv3": 6.69e32,
    "trmm": 7.71e19,
    "adi": 6.85e12,
    "seidel": 1.50e12,
    "stencil3d": 1.13e24,
    "correlation": 2.83e14,
    "fdtd": 2.65e24,
    "covariance": 6.34e16,
    "tensor": 4.22e14,
}


def test_all_eighteen_kernels_and_the_thesis_sixteen_first() -> None:
    assert len(KERNEL_NAMES) == 18 and KERNEL_NAMES[:16] == THESIS_KERNELS
    assert all(get_kernel(k).in_thesis for k in THESIS_KERNELS)
    assert not get_kernel("fdtd").in_thesis and not get_kernel("covariance").in_thesis


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_raw_size_and_factor_count_equal_the_specification(name: str) -> None:
    space = get_kernel(name).space
    factors, raw = APPENDIX_A[name]
    assert space.dims == factors
    assert math.prod(p.n_levels for p in space.parameters) == raw


@pytest.mark.parametrize("name", sorted(EXACT_VALID))
def test_exact_valid_sizes_equal_the_specification(name: str) -> None:
    count, exact = count_valid_by_groups(get_kernel(name).space)
    assert exact and count == EXACT_VALID[name]


@pytest.mark.parametrize("name", sorted(set(APPROX_VALID) - {"tensor"}))
def test_other_valid_sizes_match_the_specification_to_three_digits(name: str) -> None:
    count, _ = count_valid_by_groups(get_kernel(name).space)
    assert count == pytest.approx(APPROX_VALID[name], rel=6e-3)


def test_table_12_1_lists_the_three_digit_size_truncated_to_two() -> None:
    for row in list_kernels(valid=False):
        if row.table_12_1 is None:
            continue
        three = f"{row.raw_size:.2e}"  # e.g. 2.60e+22 for gemver's 2.5999e22
        assert row.table_12_1 == f"{three[:3]}e{int(three.split('e')[1])}"


def test_group_counting_equals_enumeration_on_a_small_space() -> None:
    space = Space(
        [
            Ordinal("a", (1, 2, 4, 8)),
            Ordinal("b", (1, 2, 4, 8)),
            IntRange("u", 1, 6),
            IntRange("v", 1, 6),
            IntRange("w", 1, 3),
        ],
        ["b == 1 or b % a == 0", "u == 1 or v == 1", "u * v <= 4"],
    )
    count, exact = count_valid_by_groups(space)
    assert exact and count == len(space.enumerate_index())


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_baseline_is_valid_and_untransformed(name: str) -> None:
    kernel = get_kernel(name)
    assert kernel.space.violated(kernel.baseline) == []
    source = generate(kernel, kernel.baseline, kernel.small)
    assert "#pragma" not in source and "scv_" not in source and "cbv_" not in source
    assert "spapt_checksum" in source and "ORIO_REPS" in source


def _shrunk(space: Space, config: dict) -> dict:
    """The same transformations switched on, with the smallest factors the constraints allow."""
    out = dict(config)
    for p in space.parameters:
        levels = list(p.levels)
        if len(levels) > 2 and levels.index(out[p.name]) > 1:
            trial = dict(out, **{p.name: levels[1]})
            if not space.violated(trial):
                out = trial
    return out


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_random_valid_configurations_generate_code(name: str) -> None:
    kernel = get_kernel(name)
    for config in kernel.space.sample(3, method="random", seed=3):
        source = generate(kernel, _shrunk(kernel.space, config), kernel.small)
        assert "for (" in source and source.count("{") == source.count("}")


@pytest.mark.parametrize("name", ["bicg", "mm", "seidel"])
def test_large_factors_generate_code(name: str) -> None:
    kernel = get_kernel(name)
    config = kernel.space.sample(1, method="random", seed=11)[0]
    assert "for (" in generate(kernel, config, kernel.small)


def test_every_parameter_drives_a_block_except_the_documented_dummies() -> None:
    dummies = {"mm": {"PAR"}, "mvt": {"PAR1i", "PAR1j"}, "tensor": {"VRANGE", "ORANGE"}}
    for name in KERNEL_NAMES:
        kernel = get_kernel(name)
        used = set().union(*(block.factors() for block in kernel.blocks.values()))
        assert set(kernel.space.names) - used == dummies.get(name, set()), name


def test_unknown_kernel_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bicg"):
        get_kernel("nope")


def test_default_tolerance_follows_the_thesis_strictness() -> None:
    assert get_kernel("gemver").default_rtol < 1e-16  # |delta| < 1 at 3.2e16: bit-identical
    assert get_kernel("bicg").default_rtol == pytest.approx(0.4)  # ratio checksum 2.5
    assert get_kernel("covariance").default_rtol == 1e-6  # no reference in the original
    assert get_kernel("fdtd").default_rtol == 1e-6  # its reference was never reproducible
    assert (
        get_kernel("seidel").default_rtol == 1e-4
    )  # reordered variants accepted, as in the thesis
