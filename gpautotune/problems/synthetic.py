"""Synthetic problems with known optima, for tests and benchmarks.

* :class:`BoothProblem` — seed 003 eq. 2.3 on the integer grid [-10, 10]^2.
* :class:`ScreeningProblem` — seed 003 eq. 5.2, 8 factors on an equally spaced grid of
  [-1, 1] (three factors have no effect).
* :class:`ConstrainedBitsProblem` — 54 integer factors 1..8 under a weighted-sum size
  limit, shaped like the mixed-precision quantization search: most of the raw space
  violates the limit, and the optimum is known exactly (dynamic programming).
* :class:`HiddenFailureProblem` — six integer factors whose configurations with
  ``a * b > 40`` fail to build (an unknown constraint, as a register or shared-memory
  limit is to a tuner); the optimum lies on the failure boundary's near side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.space import Config, IntRange, Ordinal, Space

__all__ = [
    "BoothProblem",
    "ConstrainedBitsProblem",
    "HiddenFailureProblem",
    "ScreeningProblem",
    "WeightedSum",
]


class _GridProblem(Problem):
    """A closed-form objective on an enumerable grid; the optimum found by enumeration."""

    def _objective(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def _find_optimum(self) -> None:
        index = self.space.enumerate_index()
        values = self._objective(self.space.columns(index))
        best = int(np.argmin(values))
        self.optimum = float(values[best])
        self._best = self.space.to_configs(index[best])[0]

    def best_known(self) -> Config:
        return dict(self._best)

    def evaluate(self, config: Config) -> Measurement:
        try:
            index = self.space.to_index([config])
        except Exception as exc:  # noqa: BLE001 - any bad configuration is a status
            return Measurement.failure(Status.INVALID, str(exc))
        if not self.space.valid_mask(index)[0]:
            return Measurement.failure(Status.INVALID, f"violates {self.space.violated(config)}")
        return Measurement.success(float(self._objective(self.space.columns(index))[0]))


class BoothProblem(_GridProblem):
    """Booth's function ``(x1 + 2 x2 - 7)^2 + (2 x1 + x2 - 5)^2`` on integers in [-10, 10]."""

    name = "booth"

    def __init__(self) -> None:
        self.space = Space([IntRange("x1", -10, 10), IntRange("x2", -10, 10)], name="booth")
        self._find_optimum()

    def _objective(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        x1, x2 = cols["x1"].astype(float), cols["x2"].astype(float)
        return (x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2


class ScreeningProblem(_GridProblem):
    """Seed 003 eq. 5.2: ``-1.5 x1 + 1.3 x3 + 3.1 x5 - 1.4 x7 + 1.35 x8^2 + 1.6 x3 x5 (+ noise)``.

    Args:
        levels: grid points per factor in [-1, 1] (at least 2).
        noise: standard deviation of Gaussian noise added to each evaluation.
        seed: seed of the noise.
    """

    name = "screening"

    def __init__(self, levels: int = 5, noise: float = 0.0, seed: int = 0) -> None:
        if levels < 2:
            raise ConfigError(f"screening: levels must be >= 2, got {levels}")
        grid = tuple(float(v) for v in np.round(np.linspace(-1, 1, levels), 10))
        self.levels, self.noise, self.seed = levels, noise, seed
        self.space = Space(
            [Ordinal(f"x{i}", grid, scale="linear") for i in range(1, 9)], name="screening"
        )
        self._rng = np.random.default_rng(seed)
        self._find_optimum()

    def _objective(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        x = {k: np.asarray(cols[k], dtype=float) for k in ("x1", "x3", "x5", "x7", "x8")}
        return (
            -1.5 * x["x1"]
            + 1.3 * x["x3"]
            + 3.1 * x["x5"]
            - 1.4 * x["x7"]
            + 1.35 * x["x8"] ** 2
            + 1.6 * x["x3"] * x["x5"]
        )

    def evaluate(self, config: Config) -> Measurement:
        m = super().evaluate(config)
        if m.ok and self.noise > 0:
            return Measurement.success(m.value + float(self._rng.normal(0, self.noise)))
        return m

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "levels": self.levels, "noise": self.noise, "seed": self.seed}


class HiddenFailureProblem(_GridProblem):
    """An unknown constraint: ``a * b > limit`` fails to build, nothing in the space says so.

    ``1 + ((a b - 36) / 16)^2 + 0.02 ((c - 3)^2 + (d - 6)^2 + (e - 2)^2 + (f - 5)^2)`` over
    ``a, b`` in 1..16 and ``c .. f`` in 1..8 (1,048,576 configurations, 60% failing with
    the default limit 40). Its minimum, 1, is at ``a b = 36``, four products from the
    failing region: a tuner must learn where configurations fail to search near it.

    Args:
        limit: configurations with ``a * b`` above it return a ``build_error``.
    """

    name = "hidden-failure"

    def __init__(self, limit: int = 40) -> None:
        if limit < 36:
            raise ConfigError(
                f"hidden-failure: limit must be >= 36 (the optimum's a*b), got {limit}"
            )
        self.limit = limit
        factors = [IntRange("a", 1, 16), IntRange("b", 1, 16)]
        factors += [IntRange(n, 1, 8) for n in "cdef"]
        self.space = Space(factors, name="hidden-failure")
        self._find_optimum()

    def _objective(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        x = {k: np.asarray(cols[k], dtype=float) for k in "abcdef"}
        centre = {"c": 3.0, "d": 6.0, "e": 2.0, "f": 5.0}
        rest = sum((x[k] - v) ** 2 for k, v in centre.items())
        return 1.0 + ((x["a"] * x["b"] - 36.0) / 16.0) ** 2 + 0.02 * rest

    def evaluate(self, config: Config) -> Measurement:
        m = super().evaluate(config)
        if m.ok and config["a"] * config["b"] > self.limit:
            return Measurement.failure(
                Status.BUILD_ERROR, f"a * b = {config['a'] * config['b']} > {self.limit}"
            )
        return m

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "limit": self.limit}


@dataclass(frozen=True)
class WeightedSum:
    """``sum_i weights[i] * column(names[i])``, vectorised (a derived size quantity)."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    __name__ = "weighted_sum"

    def __call__(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        total = np.zeros(len(cols[self.names[0]]))
        for name, w in zip(self.names, self.weights, strict=True):
            total += w * np.asarray(cols[name], dtype=float)
        return total


class ConstrainedBitsProblem(Problem):
    """A quantization-shaped problem: bits ``b_i`` in 1..8 for ``layers`` layers.

    ``size = sum_i w_i b_i`` must not exceed ``limit_bits * sum_i w_i`` (an average of
    ``limit_bits`` bits per weight), which rejects most of the raw space. The objective,
    an "accuracy loss", is ``sum_i s_i exp(-decay (b_i - 1))`` with layer sizes ``w_i``
    and sensitivities ``s_i`` drawn once from ``seed`` (first and last layers more
    sensitive, as in seed 003). It is separable, so the constrained optimum is found
    exactly by dynamic programming over the integer size budget.
    """

    name = "constrained-bits"

    def __init__(
        self, layers: int = 54, limit_bits: float = 4.0, decay: float = 0.7, seed: int = 0
    ) -> None:
        if layers < 2 or not 1.0 <= limit_bits <= 8.0:
            raise ConfigError(
                "constrained-bits: need layers >= 2 and 1 <= limit_bits <= 8, "
                f"got {layers}, {limit_bits}"
            )
        rng = np.random.default_rng(seed)
        self.layers, self.limit_bits, self.decay, self.seed = layers, limit_bits, decay, seed
        self.weights = np.round(np.exp(rng.uniform(np.log(2), np.log(64), layers))).astype(int)
        sens = rng.lognormal(0.0, 0.6, layers)
        sens[0] *= 4.0
        sens[-1] *= 3.0
        self.sensitivity = sens
        self.limit = float(np.floor(limit_bits * self.weights.sum()))
        names = tuple(f"b{i:02d}" for i in range(layers))
        self.space = Space(
            [IntRange(n, 1, 8) for n in names],
            constraints=[f"size <= {self.limit:.0f}"],
            derived={"size": WeightedSum(names, tuple(float(w) for w in self.weights))},
            name="constrained-bits",
        )
        self._solve()

    def _loss(self, bits: np.ndarray) -> np.ndarray:
        return (self.sensitivity * np.exp(-self.decay * (np.atleast_2d(bits) - 1))).sum(axis=1)

    def _solve(self) -> None:
        cap = int(self.limit)
        inf = np.inf
        best = np.full(cap + 1, inf)
        best[0] = 0.0
        choice = np.zeros((self.layers, cap + 1), dtype=np.int8)
        for i, w in enumerate(self.weights):
            new = np.full(cap + 1, inf)
            for b in range(1, 9):
                shift = int(w) * b
                if shift > cap:
                    break
                cand = np.full(cap + 1, inf)
                cand[shift:] = best[: cap + 1 - shift] + self.sensitivity[i] * np.exp(
                    -self.decay * (b - 1)
                )
                better = cand < new
                new[better] = cand[better]
                choice[i, better] = b
            best = new
        c = int(np.argmin(best))
        self.optimum = float(best[c])
        bits = np.zeros(self.layers, dtype=int)
        for i in range(self.layers - 1, -1, -1):
            bits[i] = choice[i, c]
            c -= int(self.weights[i]) * bits[i]
        self._best = dict(zip(self.space.names, bits.tolist(), strict=True))

    def best_known(self) -> Config:
        return dict(self._best)

    def evaluate(self, config: Config) -> Measurement:
        try:
            index = self.space.to_index([config])
        except Exception as exc:  # noqa: BLE001 - any bad configuration is a status
            return Measurement.failure(Status.INVALID, str(exc))
        cols = self.space.columns(index)
        size = float(cols["size"][0])
        if size > self.limit:
            return Measurement.failure(
                Status.INVALID, f"size {size:.0f} exceeds the limit {self.limit:.0f}", size=size
            )
        bits = np.array([config[n] for n in self.space.names])
        return Measurement.success(float(self._loss(bits)[0]), size=size)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layers": self.layers,
            "limit_bits": self.limit_bits,
            "decay": self.decay,
            "seed": self.seed,
        }
