"""Explain a finished run: refit its GP from the journal and compute Sobol indices.

``explain_run(db, run_id)`` reads the run's stored space, strategy settings and trials,
rebuilds the GPR strategy with those settings (a run of another strategy gets the GPR
defaults), fits its GP from scratch to every successful trial (repeated configurations
averaged, as the strategy does), and computes the indices with
:func:`~gpautotune.sensitivity.surrogate_indices`. The fit is a fresh maximum-likelihood
fit with the run's settings, not the run's last model (which was warm-started step by
step), so hyperparameters can differ slightly.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from gpautotune.exceptions import ConfigError, GPAutotuneError
from gpautotune.sensitivity import Domain, SobolResult, sobol_indices, surrogate_indices
from gpautotune.space import ROW_SET_LABEL, Space, compile_expression, space_from_spec
from gpautotune.storage import Journal, RunRecord
from gpautotune.trial import Trial

if TYPE_CHECKING:
    from rich.table import Table

    from gpautotune.strategies.gpr import GPRStrategy

__all__ = [
    "explain_run",
    "strategy_indices",
    "fit_run_surrogate",
    "load_run",
    "plot_indices",
    "indices_table",
    "run_space",
]

_log = logging.getLogger(__name__)

#: The steps :func:`explain_run` reports to its ``progress`` callback.
EXPLAIN_STEPS = 3
#: Distinct successful configurations per parameter below which the indices' intervals
#: are too narrow to trust and a warning says so (docs/sensitivity.md, "Limits").
MIN_POINTS_PER_PARAMETER = 4


def strategy_indices(strategy: GPRStrategy, **options: Any) -> SobolResult:
    """:func:`~gpautotune.sensitivity.surrogate_indices` of a GPR strategy's current model
    (its last fit).

    Keyword options are those of :func:`~gpautotune.sensitivity.surrogate_indices`.
    """
    return surrogate_indices(strategy.gp, strategy.features, strategy.space, **options)


def load_run(
    db_path: str | os.PathLike[str], run_id: int | None = None
) -> tuple[RunRecord, list[Trial]]:
    """A stored run (the last one when ``run_id`` is None) and its trials."""
    if not Path(db_path).is_file():
        raise GPAutotuneError(f"journal {str(db_path)!r} does not exist")
    with Journal(db_path, read_only=True) as journal:
        if run_id is None:
            runs = journal.runs()
            if not runs:
                raise GPAutotuneError(f"journal {str(db_path)!r} holds no run")
            run_id = runs[-1].id
        return journal.get_run(run_id), journal.trials(run_id)


def run_space(record: RunRecord, section: Mapping[str, Any] | None = None) -> Space:
    """The run's search space, rebuilt from its stored description, else from its problem.

    A space whose predicates or derived quantities are Python callables cannot be
    rebuilt from text; it is then rebuilt by the problem registry from the stored
    problem settings, or from the comparison's ``section`` that built the problem (its
    catalog entry: a replayed table named after the table, say), and checked against the
    stored description.
    """
    spec = record.settings["space"]
    rows = [c for c in spec["constraints"] if ROW_SET_LABEL.match(c)]
    try:
        if rows:  # a replayed file's "row of FILE (N rows)" is a set of rows, not text
            raise GPAutotuneError(f"its constraint {rows[0]!r} is the rows of a replayed file")
        derived = _dependency_order(spec["derived"], [p["name"] for p in spec["parameters"]])
        space = space_from_spec(spec["parameters"], spec["constraints"], derived, spec.get("name"))
        inputs = spec.get("model_inputs") or ()
        return (
            Space(
                space.parameters,
                spec["constraints"],
                derived,
                spec.get("name"),
                model_inputs=inputs,
            )
            if inputs
            else space
        )
    except GPAutotuneError as exc:
        reason = str(exc)
    from gpautotune.config import Section, build_problem
    from gpautotune.problems import problem_factory

    rebuilt, registered = [], True
    settings = record.settings["problem"]
    try:
        if rows and "path" in settings:  # a Kernel Tuner cache or T4 file (``kt-cache``)
            from gpautotune.problems.kt_cache import kt_cache_problem

            problem = kt_cache_problem(
                settings["path"],
                settings.get("objective"),
                settings.get("direction", "min"),
                settings.get("restrictions") or None,
                label=settings.get("name"),
            )
            rebuilt.append((f"the file {settings['path']!r}", problem.space))
        else:
            try:
                factory, extra = problem_factory(record.problem)
            except ConfigError:
                registered = False  # a problem made in Python: a function, search_policy
                raise
            accepted = inspect.signature(factory).parameters
            options = {k: v for k, v in settings.items() if k in accepted and k != "variant"}
            rebuilt.append((f"problem {record.problem!r}", factory(**extra, **options).space))
    except (GPAutotuneError, TypeError) as exc:
        reason += f"; problem {record.problem!r}: {exc}"
    if section is not None:
        try:
            problem = build_problem(Section(**section), factory_names=True)
            rebuilt.append((f"section {dict(section)}", problem.space))
        except (GPAutotuneError, TypeError) as exc:
            reason += f"; its comparison's section: {exc}"
    for what, space in rebuilt:
        if json.loads(json.dumps(space.describe())) == spec:
            return space
        reason += f"; {what} rebuilds a different space"
    if rows and "path" in settings:
        hint = (
            f"run explain where the replayed file {settings['path']!r} is found (the folder "
            "`tune` ran in), or pass space= to explain_run"
        )
    elif not rebuilt and not registered:
        detail = ConfigError(f"cannot rebuild the search space of run {record.id} ({reason})")
        raise ConfigError(_python_only(record, spec)) from detail
    else:
        hint = "pass space= to explain_run"
    raise ConfigError(f"cannot rebuild the search space of run {record.id} ({reason}); {hint}")


def _python_only(record: RunRecord, spec: Mapping[str, Any]) -> str:
    """Why a run whose problem and space were made in Python cannot be explained from its
    journal alone, and how to explain it from Python."""
    names = [p["name"] for p in spec["parameters"]] + list(spec["derived"])
    parts = [
        f"derived quantity {k!r}"
        for k, text in spec["derived"].items()
        if text.startswith(f"derived quantity {k!r}:")
    ]
    for text in spec["constraints"]:
        try:
            compile_expression(text, names)
        except GPAutotuneError:
            parts.append(f"constraint {text!r}")
    held = f"Python functions ({', '.join(parts)})" if parts else "Python code"
    where = (
        "result.problem.space, with result the PolicyResult search_policy returned"
        if record.problem == "quantization"
        else "the Space the run searched (tune(..., space=...) or problem.space)"
    )
    return (
        f"run {record.id}'s search space holds {held} that the journal keeps by name only, "
        f"and its problem {record.problem!r} was made in Python, not taken from the problem "
        f"registry: explain it from Python with explain_run(db, run_id={record.id}, "
        f"space=...), passing {where}"
    )


def catalog_section(db_path: str | os.PathLike[str], record: RunRecord) -> Mapping[str, Any] | None:
    """The section a comparison built ``record``'s problem from (its journal's catalog),
    or None where the journal has none."""
    with Journal(db_path, read_only=True) as journal:
        catalog = journal.problem_catalog()
    for (problem, settings), entry in catalog.items():
        if problem == record.problem and json.loads(settings) == record.settings.get("problem"):
            return entry.section
    return None


def _dependency_order(derived: dict[str, str], names: list[str]) -> dict[str, str]:
    """Derived quantities ordered so that each refers only to earlier ones (the journal
    stores them with sorted keys)."""
    known, pending, ordered = list(names), dict(derived), {}
    while pending:
        ready = []
        for key, text in pending.items():
            try:
                compile_expression(text, known)
            except GPAutotuneError:
                continue
            ready.append(key)
        if not ready:
            return {**ordered, **pending}  # let Space report the first bad expression
        for key in ready:
            ordered[key] = pending.pop(key)
            known.append(key)
    return ordered


def _training_data(strategy: GPRStrategy, trials: Sequence[Trial]) -> tuple[np.ndarray, np.ndarray]:
    """GP inputs and values of successful trials, repeated configurations averaged."""
    space = strategy.space
    index = space.to_index([t.config for t in trials])
    values = np.array([t.value for t in trials], dtype=float)
    _, first, inverse = np.unique(space.row_keys(index), return_index=True, return_inverse=True)
    values = np.bincount(inverse, weights=values) / np.bincount(inverse)
    return strategy.features(index[first]), values


def fit_run_surrogate(record: RunRecord, space: Space, trials: Sequence[Trial]) -> GPRStrategy:
    """A GPR strategy with the run's settings whose GP is fitted to the run's trials.

    Warns (``UserWarning``) when the successful trials all have the same value (the GP
    then describes only its prior) or are fewer than :data:`MIN_POINTS_PER_PARAMETER`
    distinct configurations per parameter (its indices' intervals are then too narrow).
    """
    strategy, notice = _fit(record, space, trials)
    if notice is not None:
        warnings.warn(notice, UserWarning, stacklevel=2)
    return strategy


def _fit(
    record: RunRecord, space: Space, trials: Sequence[Trial]
) -> tuple[GPRStrategy, str | None]:
    """:func:`fit_run_surrogate`, and the warning it has for the user (or None)."""
    from gpautotune.strategies import make_strategy, strategy_options
    from gpautotune.strategies.gpr import GPRStrategy

    stored = dict(record.settings["strategy"]) if record.strategy == "gpr" else {}
    allowed = strategy_options("gpr")
    dropped = sorted(set(stored) - set(allowed) - set(GPRStrategy.RESOLVED))
    if dropped:
        _log.warning(
            "run %d: ignoring stored GPR settings this version does not know: %s",
            record.id,
            dropped,
        )
    if record.strategy != "gpr":
        _log.info(
            "run %d used %r; explaining it with a default GPR model", record.id, record.strategy
        )
    strategy = make_strategy(
        "gpr", space, seed=record.seed, **{k: v for k, v in stored.items() if k in allowed}
    )
    ok = _successful(record, trials)
    X, y = _training_data(strategy, ok)
    strategy.gp.fit(X, y, seed=record.seed or 0)
    value = _constant(ok)
    if value is not None:
        return strategy, (
            f"{_constant_message(record, len(ok), value)}; a GP fitted to them describes "
            "only its prior, and the indices of its paths are not the objective's"
        )
    return strategy, _sparse_message(record, len(y), space.dims)


def _successful(record: RunRecord, trials: Sequence[Trial]) -> list[Trial]:
    ok = [t for t in trials if t.ok]
    if len(ok) < 2:
        raise GPAutotuneError(
            f"run {record.id} has {len(ok)} successful trials; a GP needs at least 2"
        )
    return ok


def _constant(ok: Sequence[Trial]) -> float | None:
    """The value every successful trial measured (to 1e-12 relative), or None."""
    values = np.array([t.value for t in ok], dtype=float)
    return float(values[0]) if np.ptp(values) <= 1e-12 * np.abs(values).max() else None


def _constant_message(record: RunRecord, count: int, value: float) -> str:
    return (
        f"run {record.id}'s {count} successful trials all measured {value:.6g}: the "
        "objective is constant over them (zero variance), so no parameter explains any "
        "of its variation and every Sobol index is 0"
    )


def _sparse_message(record: RunRecord, points: int, dims: int) -> str | None:
    """The warning for a run with too few distinct successful configurations, or None."""
    need = MIN_POINTS_PER_PARAMETER * dims
    if points >= need:
        return None
    return (
        f"run {record.id} has {points} distinct successful configurations for {dims} "
        f"parameters (fewer than {MIN_POINTS_PER_PARAMETER} per parameter, {need}): too few "
        "for the GP to tell the parameters apart, and the intervals are too narrow (coverage "
        "well below the nominal level; docs/sensitivity.md); measure more configurations "
        "before trusting the indices"
    )


def _constant_result(
    space: Space, value: float, count: int, *, domain: Domain, **options: Any
) -> SobolResult:
    """The indices of a constant objective: every one 0 (what :func:`sobol_indices` gives
    for a constant function), with ``options`` (``n``, ``confidence``, ``second_order``,
    ``seed``) checked as for a GP."""
    zero = sobol_indices(lambda index: np.zeros(len(index)), space, domain=domain, **options)
    table = zero.table.assign(S1_mean_fn=0.0, ST_mean_fn=0.0)
    method = (
        f"constant objective: all {count} successful trials measured {value:.6g}, so its "
        "variance over them is 0 and every index is 0 (no GP fitted)"
    )
    return SobolResult(table, zero.second_order, domain, method, 0, zero.confidence)


def explain_run(
    db_path: str | os.PathLike[str],
    run_id: int | None = None,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    domain: Domain = "box",
    n: int = 1024,
    paths: int = 32,
    bootstrap: int = 100,
    confidence: float = 0.95,
    second_order: bool = False,
    seed: int = 0,
    space: Space | None = None,
    progress: Callable[[int, str], None] | None = None,
) -> tuple[pd.DataFrame, Path | None]:
    """Sobol indices of the GP refitted to a stored run.

    Args:
        db_path: the trial journal.
        run_id: the run (default: the last run of the journal).
        out_dir: where to write ``run<ID>-sobol-<domain>.csv``, ``.json`` (how it was
            computed) and ``.png`` (bar chart); nothing is written when None.
        domain, n, paths, bootstrap, confidence, second_order, seed: see
            :func:`~gpautotune.sensitivity.surrogate_indices`.
        space: the run's space, when it cannot be rebuilt from the journal.
        progress: ``progress(step, what)`` as each of the :data:`EXPLAIN_STEPS` steps
            starts (a progress bar's text), then ``progress(EXPLAIN_STEPS, "done")``.

    Returns:
        the indices table (see :class:`~gpautotune.analysis.SobolResult`; its ``attrs``
        hold ``run_id``, ``method``, ``domain``, ``n_trials`` and ``constant``) and the
        chart's path.

    Warns:
        UserWarning: the successful trials all have the same value (no GP is fitted and
            every index is 0, as :func:`~gpautotune.sensitivity.sobol_indices` gives for
            a constant function), or there are fewer than
            :data:`MIN_POINTS_PER_PARAMETER` distinct successful configurations per
            parameter (the intervals are then too narrow; docs/sensitivity.md).
    """
    step = progress or (lambda i, what: None)
    step(0, "reading the run and rebuilding its space")
    record, trials = load_run(db_path, run_id)
    space = run_space(record, catalog_section(db_path, record)) if space is None else space
    ok = _successful(record, trials)
    value = _constant(ok)
    options: dict[str, Any] = dict(n=n, confidence=confidence, second_order=second_order, seed=seed)
    if value is not None:  # Var f = 0: every index is 0, whatever a GP's prior paths say
        step(1, f"run {record.id}'s {len(ok)} ok trials have one value: nothing to fit")
        step(2, "every index of a constant objective is 0")
        result = _constant_result(space, value, len(ok), domain=domain, bootstrap=0, **options)
        notice: str | None = _constant_message(record, len(ok), value)
    else:
        step(1, f"fitting the GP to run {record.id}'s {len(ok)} ok trials")
        strategy, notice = _fit(record, space, trials)
        step(2, f"Sobol indices over {paths} posterior paths ({n} points, {bootstrap} resamples)")
        result = strategy_indices(
            strategy, domain=domain, paths=paths, bootstrap=bootstrap, **options
        )
    table = result.table.copy()
    table.attrs.update(
        run_id=record.id,
        method=result.method,
        domain=domain,
        n_trials=len(ok),
        problem=record.problem,
        strategy=record.strategy,
        constant=value is not None,
    )
    chart = None
    if out_dir is not None:
        try:
            chart = _write(result, table.attrs, Path(out_dir), f"run{record.id}-sobol-{domain}")
        except OSError as exc:
            raise ConfigError(
                f"cannot write the explanation into {str(out_dir)!r}: {exc.strerror or exc}; "
                "give another folder"
            ) from None
    if notice is not None:  # after the indices: an error in the options comes first
        warnings.warn(notice, UserWarning, stacklevel=2)
    step(EXPLAIN_STEPS, "done")
    return table, chart


def _write(result: SobolResult, meta: dict[str, Any], out_dir: Path, stem: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(out_dir / f"{stem}.csv", index=False)
    if result.second_order is not None:
        result.second_order.to_csv(out_dir / f"{stem}-pairs.csv", index=False)
    (out_dir / f"{stem}.json").write_text(
        json.dumps({**meta, "evaluations": result.evaluations}, indent=2)
    )
    title = (
        f"run {meta['run_id']} ({meta['problem']}, {meta['strategy']}, "
        f"{meta['n_trials']} trials): {meta['domain']}"
    )
    return plot_indices(
        result.table, out_dir / f"{stem}.png", title=title, confidence=result.confidence
    )


def plot_indices(
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    title: str = "",
    confidence: float = 0.95,
    interval: str = "GP posterior paths x bootstrap",
) -> Path:
    """Horizontal bars of S1 and ST per parameter (sorted by ST) with their intervals (PNG);
    ``interval`` says where the intervals come from (x-axis label)."""
    from matplotlib.figure import Figure

    from gpautotune.analysis._plots import save

    rows = table.sort_values("ST")
    y = np.arange(len(rows))
    fig = Figure(figsize=(7.0, 1.2 + 0.32 * len(rows)), layout="constrained")
    ax = fig.subplots()
    for offset, key, colour in ((-0.2, "S1", "tab:blue"), (0.2, "ST", "tab:orange")):
        point = rows[key].to_numpy()
        err = np.vstack(
            [point - rows[f"{key}_low"].to_numpy(), rows[f"{key}_high"].to_numpy() - point]
        )
        ax.barh(
            y + offset,
            point,
            height=0.38,
            color=colour,
            label=key,
            xerr=np.maximum(err, 0.0),
            error_kw={"elinewidth": 1, "capsize": 2},
        )
    ax.set_yticks(y, rows["parameter"].tolist())
    ax.axvline(0.0, color="black", linewidth=0.6)
    ax.set_xlabel(f"Sobol index ({confidence:.0%} interval: {interval})")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right")
    return save(fig, path, dpi=110)


def indices_table(
    table: pd.DataFrame, *, title: str | None = None, screen: float | None = None
) -> Table:
    """A Rich table of the indices, most important first; ``screen`` adds a "fix?" column
    marking parameters whose ST upper bound is below that threshold."""
    from rich.table import Table

    out = Table(title=title, caption=table.attrs.get("method"))
    for name in ("rank", "parameter", "S1", "S1 interval", "ST", "ST interval"):
        out.add_column(name, justify="left" if name == "parameter" else "right")
    if screen is not None:
        out.add_column(f"fix? (ST high < {screen:g})")
    for row in table.sort_values("rank").itertuples(index=False):
        cells = [
            str(row.rank),
            str(row.parameter),
            f"{row.S1:.3f}",
            f"[{row.S1_low:.3f}, {row.S1_high:.3f}]",
            f"{row.ST:.3f}",
            f"[{row.ST_low:.3f}, {row.ST_high:.3f}]",
        ]
        if screen is not None:
            cells.append("yes" if row.ST_high < screen else "")
        out.add_row(*cells)
    return out
