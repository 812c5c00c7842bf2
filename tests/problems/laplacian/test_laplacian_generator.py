"""The generator: structure of the code, window splitting, geometry (no device needed)."""

from __future__ import annotations

import re

import pytest

from gpautotune.exceptions import SpaceError
from gpautotune.problems.laplacian import generate_kernel, laplacian_space
from gpautotune.problems.laplacian.generator import KernelPlan, window_pieces


def _config(en=3, yc=1, vl=4, ts=2, lo=True, tn=64, ly=2):
    return {
        "elements_number": en,
        "y_component_number": yc,
        "vector_length": vl,
        "temporary_size": ts,
        "load_overlap": lo,
        "threads_number": tn,
        "lws_y": ly,
    }


def test_same_config_same_source():
    assert generate_kernel(_config()).source == generate_kernel(dict(_config())).source
    assert generate_kernel(_config()).source != generate_kernel(_config(ts=4)).source


def test_seed_figure_11_4_structure():
    """Seed 003 fig. 11.4: x 1 component, 3 rows, int8, no load overlap."""
    src = generate_kernel(_config(en=3, yc=3, vl=8, ts=4, lo=False)).source
    assert "x = (x < 3 ? 3 : (x > w - 11 ? w - 11 : x));" in src
    assert "y = (y < 1 ? 1 : (y > height - 4 ? height - 4 : y));" in src
    loads = re.findall(r"vload(\d+)\(0, &psrc\[x \+ (-?\d+) \+ w \* \(y \+ -1\)\]\)", src)
    assert loads == [("8", "-3"), ("4", "5"), ("2", "9")]
    assert src.count("vstore8(") == 3 and "convert_int8" in src and "((int)9)" in src


@pytest.mark.parametrize("largest", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("length", range(7, 23))
def test_window_pieces_cover_the_window_with_powers_of_two(length, largest):
    pieces = window_pieces(length, largest)
    assert [s for s, _ in pieces] == [sum(n for _, n in pieces[:i]) for i in range(len(pieces))]
    assert sum(n for _, n in pieces) == length
    assert all(n & (n - 1) == 0 and n <= largest for _, n in pieces)
    assert [n for _, n in pieces] == sorted((n for _, n in pieces), reverse=True)


@pytest.mark.parametrize(
    ("vl", "en", "sizes"),
    [(1, 4, [1] * 10), (2, 4, [2] * 5), (4, 4, [4, 4, 2]), (8, 4, [8, 4, 2]), (16, 4, [16, 4, 2])],
)
def test_window_loads_are_split_by_the_vector_length(vl, en, sizes):
    """BOAST's split_in_ranges: pieces of vector_length bytes, the rest in powers of two."""
    src = generate_kernel(_config(en=en, vl=vl, lo=False)).source
    first_row = "\n".join(line for line in src.splitlines() if "w * (y + -1)" in line)
    assert [int(n or 1) for n in re.findall(r"= (?:vload(\d+)|psrc)", first_row)] == sizes


def test_without_vector_recompute_only_the_tile_is_stored():
    recompute = generate_kernel(_config(en=3, vl=4, lo=False)).source
    tile = generate_kernel({**_config(en=3, vl=4, lo=False), "vector_recompute": False}).source
    assert "x > w - 7 ? w - 7" in recompute and "x > w - 6 ? w - 6" in tile
    assert re.findall(r"vstore\d", recompute) == ["vstore4"]
    stores = [line.strip() for line in tile.splitlines() if "pdst[" in line]
    assert stores == [
        "vstore2(res00.s01, 0, &pdst[x + 0 + w * (y + 0)]);",
        "pdst[x + 2 + w * (y + 0)] = res00.s2;",
    ]
    assert "(uchar)0" in tile and "vector_recompute=false" in tile  # lanes past the window


def test_swizzles_have_opencl_vector_sizes():
    for vl in (1, 2, 4, 8, 16):
        for en in (1, 2, 3, 4):
            src = generate_kernel(_config(en=en, vl=vl, lo=False)).source
            for digits in re.findall(r"\.s([0-9a-f]+)", src):
                assert len(digits) in (1, 2, 3, 4, 8, 16), (vl, en, digits)


def test_direct_loads_count():
    plan = KernelPlan.from_config(_config(en=6, yc=2, vl=2, lo=True))  # x = 3 -> 2 vectors
    src = generate_kernel(_config(en=6, yc=2, vl=2, lo=True)).source
    assert src.count("vload2(") == 3 * plan.vector_number * (plan.y_components + 2)
    assert plan.total_x == 4


def test_global_size_covers_the_image_and_is_a_multiple_of_the_local_size():
    plan = KernelPlan.from_config(_config(en=12, yc=4, vl=4, tn=128, ly=4))
    gx, gy = plan.global_size(101, 53)
    assert plan.local_size == (32, 4)
    assert gx % 32 == 0 and gy % 4 == 0
    assert gx * plan.x_components >= 3 * 101 and gy * plan.y_components >= 53


@pytest.mark.parametrize("bad", [_config(en=5, yc=2), _config(vl=3), _config(tn=64, ly=128)])
def test_structural_violations_raise(bad):
    with pytest.raises(SpaceError):
        generate_kernel(bad)


def test_every_sampled_config_generates():
    for config in laplacian_space(recompute_factor=True).sample(50, method="random", seed=3):
        assert "__kernel void laplacian(" in generate_kernel(config).source
