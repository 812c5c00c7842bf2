"""A generational genetic algorithm (GA) over the level indices of a space."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, NonNegativeInt, model_validator

from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace

__all__ = ["GeneticAlgorithm", "GeneticSettings"]

_TRIES = 50


@strategy_settings
class GeneticSettings(StrategySettings):
    """Options of :class:`GeneticAlgorithm`.

    Attributes:
        population: members per generation.
        mutation: per-gene mutation probability.
        elitism: best members copied unchanged into the next generation.
        twin_removal: breed again children that duplicate a known configuration.
        selection: how parents are picked: ``tournament`` (the better of two random
            members) or ``roulette`` (fitness-proportional, as BOAST's genetic optimizer,
            the ``darwinning`` gem, picked them: weights ``1/f``, the speed of a run time;
            ``1/(f - g)`` with ``g = best - (worst - best)`` when some value is not positive).
        mutate: ``each`` gene mutates with probability ``mutation``, or ``one`` random
            gene of a child with probability ``mutation`` (the ``darwinning`` gem's
            operator).
    """

    KEY_OMITS_DEFAULTS = ("selection", "mutate")

    population: Annotated[int, Field(ge=2)] = 20
    mutation: Annotated[float, Field(ge=0, le=1)] = 0.1
    elitism: NonNegativeInt = 1
    twin_removal: bool = True
    selection: Literal["tournament", "roulette"] = "tournament"
    mutate: Literal["each", "one"] = "each"

    @model_validator(mode="after")
    def _elite_fits(self) -> GeneticSettings:
        if self.elitism >= self.population:
            raise ValueError(
                f"elitism must be below population, got elitism={self.elitism}, "
                f"population={self.population}"
            )
        return self


@register("genetic")
class GeneticAlgorithm(StepwiseStrategy):
    """Genetic algorithm with BOAST's settings (seed 000 §6: population 20, mutation 0.1).

    Generation 0 is ``population`` uniformly random valid configurations. Each next
    generation keeps the ``elitism`` best members unchanged (not measured again) and
    fills the rest with children: two parents picked by binary tournaments (the better
    of two random members, failed members losing) or by roulette (``selection``), uniform
    crossover (each gene from
    either parent with probability 1/2) and mutation (each gene, with probability
    ``mutation``, redrawn uniformly among its levels). A child that violates the
    predicates is bred again; with ``twin_removal`` a child identical to any
    configuration already generated (or to a sibling) is bred again too, so every
    generation measures new points. After a few failed tries a uniformly random unseen
    valid configuration takes the child's place. Generations go on until the budget is
    spent. Real parameters mutate to a uniform position.

    The options are the fields of :class:`GeneticSettings`.
    """

    Settings = GeneticSettings
    options: GeneticSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.generation = -1
        self._members: np.ndarray | None = None

    def _info(self) -> dict[str, object]:
        return {"generation": self.generation}

    def _step(self) -> np.ndarray | None:
        self.generation += 1
        if self._members is None:
            first = Subspace(self.space).sample(
                self.options.population, self.rng, exclude=self.history
            )
            self._members = first
            return first if len(first) else None
        fitness = self._fitness(self._members)
        elite = self._members[np.argsort(fitness, kind="stable")[: self.options.elitism]]
        children = self._breed(self._members, fitness, self.options.population - len(elite))
        if len(children) == 0:
            return None
        self._members = np.concatenate([elite, children])
        return children

    def _fitness(self, members: np.ndarray) -> np.ndarray:
        values = [self.value(k) for k in self.keys(members)]
        return np.array([np.inf if v is None else v for v in values])

    def _breed(self, members: np.ndarray, fitness: np.ndarray, count: int) -> np.ndarray:
        children: list[np.ndarray] = []
        taken: set[object] = set()
        for _ in range(count):
            child = self._child(members, fitness, taken)
            if child is None:
                child = self._random_unseen(taken)
            if child is None:
                break
            taken.add(self.keys(child[None, :])[0])
            children.append(child)
        return np.asarray(children).reshape(-1, self.space.dims)

    def _child(
        self, members: np.ndarray, fitness: np.ndarray, taken: set[object]
    ) -> np.ndarray | None:
        for _ in range(_TRIES):
            a, b = self._parent(fitness), self._parent(fitness)
            genes = np.where(self.rng.random(self.space.dims) < 0.5, members[a], members[b])
            genes = self._mutate(genes)
            if not self.space.valid_mask(genes[None, :])[0]:
                continue
            key = self.keys(genes[None, :])[0]
            if key in taken or (self.options.twin_removal and key in self.history):
                continue
            return genes
        return None

    def _parent(self, fitness: np.ndarray) -> int:
        if self.options.selection == "roulette":
            return self._roulette(fitness)
        return self._tournament(fitness)

    def _roulette(self, fitness: np.ndarray) -> int:
        """A member drawn with probability proportional to ``1/f`` (failed members: 0),
        or to ``1/(f - g)``, ``g = 2 best - worst``, when a value is not positive; uniform
        when every value is the same (darwinning's rule for minimisation)."""
        ok = np.isfinite(fitness)
        if not ok.any() or np.ptp(fitness[ok]) == 0:
            return int(self.rng.integers(len(fitness)))
        best, worst = fitness[ok].min(), fitness[ok].max()
        goal = 0.0 if best > 0 else 2 * best - worst
        weights = np.zeros(len(fitness))
        weights[ok] = 1.0 / (fitness[ok] - goal)
        return int(self.rng.choice(len(fitness), p=weights / weights.sum()))

    def _tournament(self, fitness: np.ndarray) -> int:
        i, j = self.rng.integers(len(fitness), size=2)
        return int(i if fitness[i] <= fitness[j] else j)

    def _mutate(self, genes: np.ndarray) -> np.ndarray:
        genes = genes.copy()
        if self.options.mutate == "one":
            if self.rng.random() < self.options.mutation:
                j = int(self.rng.integers(self.space.dims))
                p = self.space.parameters[j]
                genes[j] = self.rng.integers(p.n_levels) if p.is_discrete else self.rng.random()
            return genes
        for j, p in enumerate(self.space.parameters):
            if self.rng.random() < self.options.mutation:
                genes[j] = self.rng.integers(p.n_levels) if p.is_discrete else self.rng.random()
        return genes

    def _random_unseen(self, taken: set[object]) -> np.ndarray | None:
        exclude = set(self.history) | taken
        row = Subspace(self.space).sample(1, self.rng, exclude=exclude)
        return row[0] if len(row) else None
