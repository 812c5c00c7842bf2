"""Sensitivity indices over the valid set: dependent inputs, Kucherenko's definitions.

Inputs are uniform over the **valid** configurations (the predicates hold), so they are
dependent and the box estimators do not apply. We keep the variance-based definitions
for dependent inputs (Kucherenko, Tarantola & Annoni 2012, "Estimation of global
sensitivity indices for models with dependent variables", CPC 183:937-946):

    S1_i = Var(E[f | X_i]) / Var(f),      ST_i = E[Var(f | X_~i)] / Var(f),

all moments under the uniform distribution on the valid set, and estimate them from
``n`` valid points ``x_k`` drawn uniformly (rejection from the unit box), or from every
valid configuration when there are at most ``n`` (then the whole population is used,
there is no Monte-Carlo error and no bootstrap):

* **S1** by the given-data (ANOVA) estimator: group the sample by the level of ``X_i``
  (a real factor by ``real_levels`` equal cells, which loses the variation of
  ``E[f | X_i]`` inside a cell: a small downward bias), take the variance of the group
  means and subtract its small-sample bias ``(L - 1) MSW / n`` (one-way ANOVA).
* **ST** by inner conditioning: for each ``x_k`` and factor ``i``, evaluate ``f`` at
  every level ``l`` of ``X_i`` for which ``(l, x_k,~i)`` is valid (the conditional law
  of ``X_i`` given ``X_~i`` is uniform over those levels) and take their variance (exact
  for a discrete factor; for a real one, the unbiased variance of ``real_levels``
  uniform draws that keep the point valid); ST_i is the mean of those variances over
  ``k`` divided by the sample variance.

Both need only valid configurations, so they also apply to a measured table of the
valid set. Limits: with dependent inputs, S1_i > ST_i is possible, S1 and ST mix a
factor's own effect with that of the factors it is tied to by the predicates, and a
factor that the others determine (only one admissible level) has ST_i = 0 even if it
matters; indices do not sum to 1. Use them to say how the objective varies *within the
valid set*, the box indices to say what the model's function depends on.
"""

from __future__ import annotations

import numpy as np

from gpautotune.exceptions import SpaceError
from gpautotune.sensitivity._estimates import Estimates
from gpautotune.sensitivity._paths import PathSampler, checked_values
from gpautotune.space import Space

__all__ = ["valid_sample", "valid_estimates"]

ENUMERATE_RAW_LIMIT = 5_000_000
MAX_RAW = 1 << 26


def valid_sample(space: Space, n: int, *, seed: int) -> tuple[np.ndarray, bool]:
    """``n`` i.i.d. uniform valid configurations, or all of them when there are at most
    ``n`` (then the second item, "whole population", is True)."""
    if space.is_discrete and space.size <= ENUMERATE_RAW_LIMIT:
        every = space.enumerate_index()
        if len(every) <= n:
            return every, True
    rng, parts, found, drawn = np.random.default_rng(seed), [], 0, 0
    batch = max(4 * n, 4096)
    while found < n:
        if drawn >= MAX_RAW:
            raise SpaceError(
                f"only {found} valid configurations in {drawn} uniform draws; the valid set is too "
                "small a fraction of the box for rejection sampling"
            )
        index = space.from_unit(rng.random((batch, space.dims)))
        index = index[space.valid_mask(index)]
        parts.append(index)
        found, drawn = found + len(index), drawn + batch
        batch = min(batch * 2, 1 << 20)
    return np.concatenate(parts)[:n], False


def _groups(space: Space, index: np.ndarray, j: int, real_levels: int) -> tuple[np.ndarray, int]:
    p = space.parameters[j]
    if p.is_discrete:
        return index[:, j].astype(np.int64), p.n_levels
    return np.minimum((index[:, j] * real_levels).astype(np.int64), real_levels - 1), real_levels


def _first_order(
    f: np.ndarray, groups: np.ndarray, n_groups: int, W: np.ndarray, correct: bool
) -> np.ndarray:
    """Correlation ratio of ``f`` by ``groups`` for each weight row of ``W``, corrected for
    the small-sample bias of a random sample when ``correct``."""
    n = len(f)
    G = np.zeros((n, n_groups))
    G[np.arange(n), groups] = 1.0
    count, total, squares = W @ G, W @ (G * f[:, None]), W @ (G * f[:, None] ** 2)
    mean = (W @ f) / n
    var = (W @ f**2) / n - mean**2
    group_mean = total / np.where(count > 0, count, 1.0)
    between = (count * (group_mean - mean[:, None]) ** 2).sum(axis=1) / n
    within = (squares - total * group_mean).sum(axis=1)
    groups_used = (count > 0).sum(axis=1)
    if correct:
        # Bootstrap replicates are samples of the empirical distribution, whose own
        # correlation ratio is the uncorrected one: centre them on the corrected estimate.
        bias = (groups_used - 1) * within / np.maximum(n - groups_used, 1) / n
        between -= bias
        between[1:] -= bias[0]
    return np.divide(between, var, out=np.zeros_like(var), where=var > 0)


def _inner_variances(
    sampler: PathSampler,
    space: Space,
    index: np.ndarray,
    j: int,
    real_levels: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, int]:
    """``Var(f | x_~j)`` over the admissible levels of factor ``j``, per path and point."""
    n, param = len(index), space.parameters[j]
    k = param.n_levels if param.is_discrete else real_levels
    rows = np.repeat(index, k, axis=0)
    if param.is_discrete:  # every level: the exact conditional variance
        rows[:, j] = np.tile(np.arange(k, dtype=float), n)
    else:  # k uniform draws: the unbiased (ddof=1) sample variance
        rows[:, j] = rng.random(n * k)
    owner = np.repeat(np.arange(n), k)
    keep = space.valid_mask(rows)
    values = checked_values(sampler, rows[keep])
    owner = owner[keep]
    count = np.bincount(owner, minlength=n)
    ddof = 0 if param.is_discrete else 1
    out = np.empty((values.shape[0], n))
    for p, v in enumerate(values):
        mean = np.bincount(owner, weights=v, minlength=n) / np.maximum(count, 1)
        spread = np.bincount(owner, weights=v * v, minlength=n) - count * mean**2
        out[p] = np.where(count > ddof, np.maximum(spread, 0.0) / np.maximum(count - ddof, 1), 0.0)
    return out, int(keep.sum())


def valid_estimates(
    sampler: PathSampler, space: Space, n: int, *, bootstrap: int, seed: int, real_levels: int = 32
) -> Estimates:
    """S1 and ST over the valid set, for every path, whole sample and bootstrap resamples."""
    index, population = valid_sample(space, n, seed=seed)
    n = len(index)
    rng = np.random.default_rng(seed)
    W = np.ones((1, n))  # the whole sample; then bootstrap resamples (none for a whole population)
    if bootstrap and not population:
        W = np.vstack([W, rng.multinomial(n, np.full(n, 1.0 / n), size=bootstrap)])
    f = checked_values(sampler, index)
    P, d = f.shape[0], space.dims
    s1, st = np.empty((P, len(W), d)), np.empty((P, len(W), d))
    evaluations = f.size
    mean = (W @ f.T) / n  # (B + 1, P)
    var = (W @ (f.T**2)) / n - mean**2
    for j in range(d):
        groups, n_groups = _groups(space, index, j, real_levels)
        inner, count = _inner_variances(sampler, space, index, j, real_levels, rng)
        evaluations += count * P
        st[:, :, j] = np.divide((W @ inner.T) / n, var, out=np.zeros_like(var), where=var > 0).T
        for p in range(P):
            s1[p, :, j] = _first_order(f[p], groups, n_groups, W, correct=not population)
    return Estimates(s1, st, None, evaluations=evaluations, base=n, population=population)
