"""Image sizes (width × height, pixels) the Laplacian kernel is timed on.

``thesis`` are the seeds' five sizes; ``small`` keeps a tuning run on PoCL (CPU OpenCL)
to seconds per evaluation; ``tiny`` is for tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpautotune.exceptions import ConfigError

__all__ = ["SIZE_PRESETS", "resolve_sizes", "MIN_SIZE"]

SIZE_PRESETS: dict[str, tuple[tuple[int, int], ...]] = {
    "thesis": ((768, 432), (2560, 1600), (2048, 2048), (5760, 3240), (7680, 4320)),
    "small": ((640, 360), (1280, 720)),
    "tiny": ((37, 19),),
}
#: The smallest image every configuration fits in: 22 bytes (16 + 6) a row, 8 rows.
MIN_SIZE = (8, 8)

SizesLike = str | Sequence[str | Sequence[int]]


def _parse(item: str | Sequence[int]) -> tuple[int, int]:
    try:
        parts = item.lower().split("x") if isinstance(item, str) else list(item)
        width, height = (int(p) for p in parts)
        if any(not isinstance(p, str) and p != int(p) for p in parts):  # 640.7 is no size
            raise ValueError(item)
    except (TypeError, ValueError):
        raise ConfigError(
            f"an image size is 'WIDTHxHEIGHT' or [width, height], not {item!r}"
        ) from None
    if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
        raise ConfigError(
            f"image size {width}x{height} is below the minimum {MIN_SIZE[0]}x{MIN_SIZE[1]}"
        )
    return width, height


def resolve_sizes(sizes: SizesLike) -> tuple[tuple[int, int], ...]:
    """Sizes from a preset name (``thesis``, ``small``, ``tiny``) or explicit sizes.

    Explicit sizes are ``"WIDTHxHEIGHT"`` strings or ``[width, height]`` pairs; a single
    string of comma-separated sizes (``"640x360,320x180"``) works too.
    """
    if isinstance(sizes, str):
        if sizes in SIZE_PRESETS:
            return SIZE_PRESETS[sizes]
        if "x" not in sizes.lower():
            raise ConfigError(
                f"unknown size preset {sizes!r}; presets: {sorted(SIZE_PRESETS)} or 'WxH,...'"
            )
        sizes = [s.strip() for s in sizes.split(",") if s.strip()]
    if sizes is None or (
        isinstance(sizes, Sequence) and len(sizes) == 2 and all(isinstance(v, int) for v in sizes)
    ):
        raise ConfigError(
            f"sizes is a list of image sizes ('WIDTHxHEIGHT' or [width, height]) or a preset "
            f"{sorted(SIZE_PRESETS)}, not {sizes!r}; one size is [[width, height]]"
        )
    out = tuple(_parse(s) for s in sizes)
    if not out:
        raise ConfigError("at least one image size is needed")
    return out
