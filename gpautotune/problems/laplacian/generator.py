"""Generate the Laplacian OpenCL kernel of the seeds (BOAST) from a configuration.

One work item computes a tile of ``x_component_number`` × ``y_component_number`` bytes
of the interleaved RGB image (``w = 3·width`` bytes a row) with ``V =
ceil(x_component_number / vector_length)`` vectors per row. With ``vector_recompute``
(the seeds' dataset) it covers ``total_x = V·vector_length`` bytes, storing whole
vectors that may overlap the next work item's tile with identical values; without, it
covers ``total_x = x_component_number`` bytes: the last vector is still computed whole,
but only its first lanes are stored, with power-of-two stores, largest first (BOAST's
tail). Without ``load_overlap``, each input row is one window of ``total_x + 6`` bytes
loaded in pieces of ``vector_length`` bytes, the rest in smaller powers of two (BOAST's
``split_in_ranges``); lanes of a last vector past the window are zero (never stored).
For every output byte ``e`` of channel ``c`` and its 3×3 neighbourhood ``a..i``
(columns at byte offsets -3, 0, +3)::

    out = clamp(-a - b - c - d + 9·e - f - g - h - i, 0, 255)

computed in ``short`` (``temporary_size`` 2) or ``int`` (4). Names follow the seeds'
generated code (seed 000 appendix A, seed 003 figure 11.4): ``tempc{col}{vec}{row}`` are
converted inputs, ``resc{vec}{row}`` results in the temporary type, ``res{vec}{row}``
the clamped ``uchar`` vectors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpautotune.exceptions import SpaceError

__all__ = ["KERNEL_NAME", "KernelPlan", "GeneratedKernel", "generate_kernel", "window_pieces"]

#: The ``__kernel`` function's name in every generated source.
KERNEL_NAME = "laplacian"
_SWIZZLE_DIGITS = "0123456789abcdef"
#: Sizes a swizzle may return (OpenCL has no 5-, 6- or 7-component vectors).
_SWIZZLE_SIZES = (16, 8, 4, 3, 2, 1)


@dataclass(frozen=True)
class KernelPlan:
    """The derived quantities of one configuration that shape the code.

    Attributes:
        x_components: bytes a work item computes along a row (``elements_number /
            y_component_number``).
        y_components: rows a work item computes.
        vector_length: OpenCL vector width (1 means scalars).
        temporary_size: bytes of the arithmetic type (2: ``short``, 4: ``int``).
        load_overlap: load each stencil column directly (true) or one window per row.
        lws_x: work-group extent in x (``threads_number / lws_y``).
        lws_y: work-group extent in y.
        vector_recompute: compute and store whole vectors past the tile (true), or
            store only the tile's bytes (false).
    """

    x_components: int
    y_components: int
    vector_length: int
    temporary_size: int
    load_overlap: bool
    lws_x: int
    lws_y: int
    vector_recompute: bool = True

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> KernelPlan:
        """The plan of a configuration dict of the Laplacian space.

        Raises:
            SpaceError: a structural rule the code relies on is broken (the tile does not
                divide, unknown widths, a work-group extent that does not divide).
        """
        en, yc = int(config["elements_number"]), int(config["y_component_number"])
        vl, ts = int(config["vector_length"]), int(config["temporary_size"])
        tn, ly = int(config["threads_number"]), int(config["lws_y"])
        if yc < 1 or en < yc or en % yc:
            raise SpaceError(
                f"elements_number {en} must be a positive multiple of y_component_number {yc}"
            )
        if vl not in (1, 2, 4, 8, 16) or ts not in (2, 4):
            raise SpaceError(
                f"vector_length {vl} must be 1..16 (power of two), temporary_size 2 or 4, not {ts}"
            )
        if ly < 1 or tn % ly:
            raise SpaceError(f"lws_y {ly} must divide threads_number {tn}")
        recompute = bool(config.get("vector_recompute", True))
        return cls(en // yc, yc, vl, ts, bool(config["load_overlap"]), tn // ly, ly, recompute)

    @property
    def vector_number(self) -> int:
        """``V = ceil(x_components / vector_length)`` vectors per row."""
        return math.ceil(self.x_components / self.vector_length)

    @property
    def total_x(self) -> int:
        """Bytes a work item covers along a row: ``V·vector_length`` when recomputing,
        else ``x_components``."""
        if self.vector_recompute:
            return self.vector_number * self.vector_length
        return self.x_components

    @property
    def local_size(self) -> tuple[int, int]:
        return (self.lws_x, self.lws_y)

    def global_size(self, width: int, height: int) -> tuple[int, int]:
        """``[roundup(ceil(3·width / xc), lws_x), roundup(ceil(height / yc), lws_y)]``."""
        gx = math.ceil(3 * width / self.x_components)
        gy = math.ceil(height / self.y_components)
        return (_round_up(gx, self.lws_x), _round_up(gy, self.lws_y))


@dataclass(frozen=True)
class GeneratedKernel:
    """OpenCL C source and the launch geometry of one configuration.

    Attributes:
        source: the program text; its kernel is :data:`KERNEL_NAME` with arguments
            ``(const __global uchar *psrc, __global uchar *pdst, int width, int height)``.
        plan: the derived quantities (tile, vectors, work-group shape).
        local_size: the work-group size launched (``plan.local_size`` unless overridden).
    """

    source: str
    plan: KernelPlan
    local_size: tuple[int, int]

    def global_size(self, width: int, height: int) -> tuple[int, int]:
        return self.plan.global_size(width, height)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def generate_kernel(config: Mapping[str, Any]) -> GeneratedKernel:
    """Generate the kernel of a configuration (deterministic: same config, same text)."""
    plan = KernelPlan.from_config(config)
    lines = [*_header(plan), *_declarations(plan)]
    for row in range(plan.y_components + 2):
        lines += _row_direct_loads(plan, row) if plan.load_overlap else _row_window_loads(plan, row)
    lines += _compute(plan) + _stores(plan) + ["}"]
    return GeneratedKernel("\n".join(lines) + "\n", plan, plan.local_size)


def _vtype(base: str, n: int) -> str:
    return base if n == 1 else f"{base}{n}"


def _temp(plan: KernelPlan) -> str:
    return "short" if plan.temporary_size == 2 else "int"


def _header(plan: KernelPlan) -> list[str]:
    xr, yr = plan.total_x + 3, plan.y_components + 1
    return [
        f"// Laplacian: x_component_number={plan.x_components}"
        f" y_component_number={plan.y_components}"
        f" vector_length={plan.vector_length} temporary_size={plan.temporary_size}"
        f" load_overlap={str(plan.load_overlap).lower()}"
        f" vector_recompute={str(plan.vector_recompute).lower()}"
        f" lws=({plan.lws_x},{plan.lws_y})",
        f"__kernel void {KERNEL_NAME}(const __global uchar * psrc, __global uchar * pdst,",
        "                        const int width, const int height) {",
        "  const int w = width * 3;",
        f"  int x = (int)get_global_id(0) * {plan.x_components};",
        f"  int y = (int)get_global_id(1) * {plan.y_components};",
        f"  x = (x < 3 ? 3 : (x > w - {xr} ? w - {xr} : x));",
        f"  y = (y < 1 ? 1 : (y > height - {yr} ? height - {yr} : y));",
    ]


def _declarations(plan: KernelPlan) -> list[str]:
    vl, vn, rows = plan.vector_length, plan.vector_number, plan.y_components + 2
    temp = _vtype(_temp(plan), vl)
    tempc = [f"tempc{c}{v}{r}" for c in range(3) for v in range(vn) for r in range(rows)]
    resc = [f"resc{v}{r}" for v in range(vn) for r in range(plan.y_components)]
    res = [f"res{v}{r}" for v in range(vn) for r in range(plan.y_components)]
    out = [
        f"  {temp} {', '.join(tempc)};",
        f"  {temp} {', '.join(resc)};",
        f"  {_vtype('uchar', vl)} {', '.join(res)};",
    ]
    if not plan.load_overlap:
        out += [
            f"  {_vtype('uchar', size)} {_piece_name(start, size)};"
            for start, size in window_pieces(plan.total_x + 6, plan.vector_length)
        ]
    return out


def _address(base: str, offset: int, row: int) -> str:
    return f"&{base}[x + {offset} + w * (y + {row})]"


def _load(size: int, address: str) -> str:
    return address[1:] if size == 1 else f"vload{size}(0, {address})"


def _convert(plan: KernelPlan, expr: str) -> str:
    return f"convert_{_vtype(_temp(plan), plan.vector_length)}({expr})"


def _row_direct_loads(plan: KernelPlan, row: int) -> list[str]:
    """``load_overlap``: every stencil column of every vector loaded on its own."""
    vl, out = plan.vector_length, []
    for col in range(3):
        for v in range(plan.vector_number):
            addr = _address("psrc", v * vl + 3 * (col - 1), row - 1)
            out.append(f"  tempc{col}{v}{row} = {_convert(plan, _load(vl, addr))};")
    return out


def window_pieces(length: int, largest: int = 16) -> list[tuple[int, int]]:
    """Split a window of ``length`` bytes into loads of ``largest`` bytes (a power of two),
    the rest into smaller powers of two, largest first.

    Returns:
        ``(start, size)`` pairs covering ``0 .. length-1`` (14 by 8 -> 8 + 4 + 2; 14 by
        4 -> 4 + 4 + 4 + 2).
    """
    pieces, start = [], 0
    while start < length:
        size = largest
        while size > length - start:
            size //= 2
        pieces.append((start, size))
        start += size
    return pieces


def _piece_name(start: int, size: int) -> str:
    return f"tempload{start}_{start + size - 1}"


def _row_window_loads(plan: KernelPlan, row: int) -> list[str]:
    """No ``load_overlap``: one window of ``total_x + 6`` bytes, columns assembled by swizzles."""
    pieces = window_pieces(plan.total_x + 6, plan.vector_length)
    out = [
        f"  {_piece_name(s, n)} = {_load(n, _address('psrc', s - 3, row - 1))};" for s, n in pieces
    ]
    vl = plan.vector_length
    for col in range(3):
        for v in range(plan.vector_number):
            parts = _window_range(pieces, v * vl + 3 * col, vl)
            missing = v * vl + 3 * col + vl - (plan.total_x + 6)  # past the window: zero lanes
            parts += ["(uchar)0"] * max(missing, 0)
            expr = parts[0] if len(parts) == 1 else f"({_vtype('uchar', vl)})({', '.join(parts)})"
            out.append(f"  tempc{col}{v}{row} = {_convert(plan, expr)};")
    return out


def _window_range(pieces: list[tuple[int, int]], first: int, count: int) -> list[str]:
    """Expressions (whole pieces or swizzles of valid sizes) for window bytes
    ``first..first+count-1``."""
    parts = []
    for start, size in pieces:
        lo, hi = max(first, start), min(first + count, start + size)
        if lo >= hi:
            continue
        name = _piece_name(start, size)
        if size == 1 or (lo == start and hi == start + size):
            parts.append(name)
            continue
        k = lo - start
        while k < hi - start:
            n = next(s for s in _SWIZZLE_SIZES if s <= hi - start - k)
            parts.append(f"{name}.s{_SWIZZLE_DIGITS[k : k + n]}")
            k += n
    return parts


def _compute(plan: KernelPlan) -> list[str]:
    """The 3×3 stencil of every result vector, then the clamp to ``uchar``."""
    temp, out = _temp(plan), []
    for v in range(plan.vector_number):
        for r in range(plan.y_components):
            terms = [f"(tempc{c}{v}{r + dr})" for dr in range(3) for c in range(3)]
            rest = [f" - {t}" for i, t in enumerate(terms) if i not in (0, 4)]
            expr = f"-{terms[0]}{''.join(rest[:3])} + {terms[4]} * (({temp})9){''.join(rest[3:])}"
            out.append(f"  resc{v}{r} = {expr};")
            clamped = f"clamp(resc{v}{r}, ({temp})0, ({temp})255)"
            out.append(f"  res{v}{r} = convert_{_vtype('uchar', plan.vector_length)}({clamped});")
    return out


def _stores(plan: KernelPlan) -> list[str]:
    """Whole-vector stores (``vstoreN`` or a byte store) of the ``total_x`` bytes of each
    row; a vector the tile ends inside is stored in power-of-two parts, largest first."""
    vl, out = plan.vector_length, []
    for r in range(plan.y_components):
        for v in range(plan.vector_number):
            for k, n in window_pieces(min(vl, plan.total_x - v * vl), vl):
                value = f"res{v}{r}" if n == vl else f"res{v}{r}.s{_SWIZZLE_DIGITS[k : k + n]}"
                addr = _address("pdst", v * vl + k, r)
                out.append(
                    f"  {addr[1:]} = {value};" if n == 1 else f"  vstore{n}({value}, 0, {addr});"
                )
    return out
