"""The 7-factor search space of the seeds' BOAST Laplacian kernel.

Parameters, levels and predicates follow ``shared/docs/laplacian-kernel.md`` (seed 000
§5, seed 003 chapter 11). ``vector_recompute`` is fixed to true, as in the seeds'
exhaustive dataset, and is therefore not a parameter, unless asked for (seed 004's
eight factors).
"""

from __future__ import annotations

from typing import Literal

from gpautotune.space import Boolean, IntRange, Ordinal, PowerOfTwo, Space

__all__ = ["laplacian_space", "REGISTER_LIMIT", "REGISTER_PROXY", "SLIDES_FOOTPRINT"]

#: Register-count proxy of the seeds' exhaustive run (see the spec): with
#: x = en / yc, V = ceil(x / vl), lo = load_overlap.
REGISTER_PROXY = (
    "threads_number * ((1 - load_overlap) * V * vector_length"
    " + load_overlap * 3 * V * (y_component_number + 2) * vector_length"
    " + V * y_component_number * vector_length"
    " + 3 * V * (y_component_number + 2) * temporary_size * vector_length * (2 - load_overlap)"
    " + V * y_component_number * temporary_size * vector_length)"
)
#: The value of the proxy at en=6, yc=6, vl=8, ts=2, lo=0, tn=1024: kept when strictly below.
REGISTER_LIMIT = 942080
#: The slides' simpler footprint rule (leaves 18,080 points).
SLIDES_FOOTPRINT = "elements_number * vector_length * temporary_size * threads_number <= 1024 * 53"


def laplacian_space(
    register_rule: Literal["proxy", "slides", "none"] = "proxy",
    *,
    recompute_factor: bool = False,
) -> Space:
    """The Laplacian kernel's space with the seeds' predicates.

    Args:
        register_rule: ``"proxy"`` (the exhaustive run's register-count proxy, 23,100 valid
            points), ``"slides"`` (the slides' footprint rule, 18,080) or ``"none"``.
        recompute_factor: add ``vector_recompute`` (true/false) as an eighth factor; the
            register proxy is the same for both (the last vector is computed whole).
    """
    constraints = [
        "lws_y <= threads_number",
        "threads_number % lws_y == 0",
        "elements_number >= y_component_number",
        "elements_number % y_component_number == 0",
        "x_component_number <= 4",
    ]
    if register_rule == "proxy":
        constraints.append(f"register_size < {REGISTER_LIMIT}")
    elif register_rule == "slides":
        constraints.append(SLIDES_FOOTPRINT)
    elif register_rule != "none":
        from gpautotune.exceptions import SpaceError

        raise SpaceError(f"register_rule must be proxy, slides or none, not {register_rule!r}")
    return Space(
        [
            IntRange("elements_number", 1, 24),
            IntRange("y_component_number", 1, 6),
            PowerOfTwo("vector_length", 1, 16),
            Ordinal("temporary_size", (2, 4)),
            Boolean("load_overlap"),
            PowerOfTwo("threads_number", 32, 1024),
            PowerOfTwo("lws_y", 1, 1024),
            *([Boolean("vector_recompute")] if recompute_factor else []),
        ],
        constraints=constraints,
        derived={
            "x_component_number": "elements_number / y_component_number",
            "V": "ceil(x_component_number / vector_length)",
            # lanes used / lanes issued: x components over V vectors of vector_length
            "vector_fill": "x_component_number / (V * vector_length)",
            "register_size": REGISTER_PROXY,
        },
        name="laplacian",
        # The kernel's x extent per work-item: without it, the GP sees elements_number and
        # y_component_number apart and stalls in the 1.21 basin. The share of vector lanes
        # doing work: without it, x = 1 looks slow after vector_length 2 measured there
        # (2.1x at 6/6 for half-empty vectors) and runs stay in the 1.15 basin of 12/6
        # (docs/benchmarks/gpr.md, "What each part of the default contributes").
        model_inputs=("x_component_number", "vector_fill"),
    )
