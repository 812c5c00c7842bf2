"""Replay a brute-forced GPU search space from a Kernel Tuner cache or T4 results file.

YAML: ``problem: {name: kt-cache, path: kt-caches/gemm/RTX_3090.json.gz}`` (the path
explicit, from the working directory or else the YAML file's folder, or relative to
``shared/data``); Python: :func:`kt_cache_problem`.

The space
    One parameter per tuned key, with the file's levels (a cache's ``tune_params``, a T4
    file's ``metadata.tune_params`` where it has them, else the values its configurations
    hold: numbers sorted, others in the order first given): all powers of two give an
    :class:`~gpautotune.space.Ordinal` on a log2 scale; other numbers an ordinal on the
    **index** scale (equally spaced levels: identical to a linear scale on evenly spaced
    grids such as ``32, 64, ..., 992``, and on hand-picked uneven grids such as
    ``1, 2, 4, 8, 16, 32, 48, 64, 96, 112, 128`` it keeps the levels the kernel's author
    put close together apart, where a linear scale would crush them); ``true``/``false``
    a :class:`~gpautotune.space.Boolean`; anything else a
    :class:`~gpautotune.space.Categorical`. Keys with one level are constants: dropped
    from the space, kept in :attr:`KtCacheProblem.constants` (exports write them back).
    A name that is a Python identifier is kept; others are mapped (``block-size`` ->
    ``block_size``, or ``block_size_2`` where the file has a ``block_size`` too), and
    :attr:`KtCacheProblem.original_names` keeps the file's. Records the reader leaves
    out (not levels of ``tune_params``, lacking a key, repeating a configuration) are
    warned about with their counts.

The valid set is the rows present
    A :class:`~gpautotune.space.RowSet` predicate admits exactly the file's rows, so no
    strategy ever proposes (or spends budget on) a configuration the file does not hold.
    ``restrictions`` (Kernel Tuner expression strings) become further predicates; rows
    that violate them are reported (a warning and :attr:`KtCacheProblem.violations`) and
    leave the valid set.

Failures
    Recorded failures (compile, runtime, invalid; markers or old sentinel values) come
    back as ``build_error``, ``run_error``, ``invalid`` (``timeout``, ``wrong_result``
    from T4 files): each costs one evaluation like any trial, and strategies never
    propose a configuration twice.

The objective
    The file's own objective (``time``) by default, or any recorded field. Its direction
    is the one given, else the file's (the ``metadata.direction`` gpautotune's T4 export
    writes), else Kernel Tuner's: the objectives it knows as higher-is-better
    (:data:`HIGHER_IS_BETTER`: ``GFLOP/s``, ``GB/s``, ...) are maximised, ``time``,
    ``energy``, ``cost`` and ``loss`` minimised, and any other needs ``direction``. With
    ``direction: max`` the tuner minimises ``1 / value`` (a time-like quantity, so
    slowdowns stay ``best / optimum`` of times) and each measurement keeps the recorded
    value in ``metrics``.
"""

from __future__ import annotations

import ast
import keyword
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np

from gpautotune.exceptions import ConfigError, PredicateError, SpaceError
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.problems._data import find_data
from gpautotune.problems.input_files import InputFile
from gpautotune.problems.replay import table_digest
from gpautotune.space import (
    Boolean,
    Categorical,
    Config,
    Ordinal,
    Parameter,
    RowSet,
    Space,
    compile_expression,
)
from gpautotune.storage import (
    HIGHER_IS_BETTER,
    STATUS_INVALIDITY,
    TIME_UNITS,
    TuningRecords,
    kernel_tuner_unit,
    listed,
    read_tuning_file,
    unrecorded,
)

__all__ = ["KtCacheProblem", "kt_cache_problem", "HIGHER_IS_BETTER"]

_STATUS_OF = {invalidity: status for status, invalidity in STATUS_INVALIDITY.items()}


def _direction(records: TuningRecords, given: str | None) -> Literal["min", "max"]:
    """The direction given, else the file's (a T4 file's ``metadata``), else Kernel
    Tuner's for the objective (a throughput maximised: minimising it would report the
    slowest kernel as the best)."""
    if given is not None:
        return "max" if given == "max" else "min"
    if records.direction is not None:
        return "max" if records.direction == "max" else "min"
    if records.objective not in HIGHER_IS_BETTER:
        raise ConfigError(
            f"{records.source}: whether a higher or a lower {records.objective!r} is better "
            "is not known (Kernel Tuner knows it for time, GFLOP/s, GB/s, ...); give "
            "`direction: min` or `direction: max`"
        )
    return "max" if HIGHER_IS_BETTER[records.objective] else "min"


def _identifier(name: str, taken: set[str]) -> str:
    """A Python identifier for a parameter name, distinct from those ``taken``."""
    ident = re.sub(r"\W", "_", str(name)) or "p"
    if ident[0].isdigit():
        ident = f"p_{ident}"
    if keyword.iskeyword(ident):
        ident += "_"
    base, k = ident, 2
    while ident in taken:
        ident, k = f"{base}_{k}", k + 1
    return ident


def _identifiers(keys: Sequence[str]) -> dict[str, str]:
    """Each key's name in the space: a key that is an identifier keeps it (restrictions
    name it so), the others get a mapped name that no key has."""
    names = {k: k for k in keys if k.isidentifier() and not keyword.iskeyword(k)}
    taken = set(names)
    for key in keys:
        if key not in names:
            names[key] = _identifier(key, taken)
            taken.add(names[key])
    return {k: names[k] for k in keys}


def _left_out(skipped: Mapping[str, tuple[int, list[dict[str, Any]]]]) -> tuple[int, str]:
    """How many records the reader left out, and ``reason: count; ...``."""
    return sum(n for n, _ in skipped.values()), "; ".join(
        f"{reason}: {n:,}" for reason, (n, _) in skipped.items()
    )


def _refuse_lists(records: TuningRecords) -> None:
    """Refuse an objective whose rows hold lists (``times``): none would be measured.

    Raises:
        ConfigError: no row is measured and some hold a list in the objective.
    """
    if any(i == "correct" for i in records.invalidity):
        return
    if listed(records.objective) in records.errors:
        raise ConfigError(
            f"{records.source}: {records.objective!r} holds lists, not numbers; name a field "
            "with one number per row (e.g. time) as `objective`"
        )


def _is_power_of_two(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value >= 1
        and float(value).is_integer()
        and int(value) & (int(value) - 1) == 0
    )


def parameter_for(name: str, levels: Sequence[Any]) -> Parameter:
    """The typed parameter for a tuned key's levels (see the module docstring)."""
    if all(isinstance(v, bool) for v in levels) and set(levels) == {False, True}:
        return Boolean(name)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in levels):
        scale = "log2" if all(_is_power_of_two(v) for v in levels) else "index"
        return Ordinal(name, tuple(levels), scale=scale)
    return Categorical(name, tuple(levels))


def _substitute(text: str, constants: Mapping[str, Any]) -> str:
    """``text`` with the names of constants replaced by their values."""

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802
            if node.id in constants:
                return ast.copy_location(ast.Constant(constants[node.id]), node)
            return node

    return ast.unparse(Inline().visit(ast.parse(text.strip(), mode="eval")))


class KtCacheProblem(Problem):
    """A Kernel Tuner cache or T4 results file replayed as a problem.

    Build it with :func:`kt_cache_problem`. See the module docstring for the space, the
    valid set, failures and the objective.

    Attributes:
        records: the rows read (:class:`~gpautotune.storage.TuningRecords`).
        objective_unit: the unit the file states for the objective (a T4 file's
            measurements), else Kernel Tuner's: ``ms`` for a field whose name starts
            with ``time``, a throughput's name (``GB/s``) for it.
        samples_unit: the unit of the run times the file states (a T4 file's
            ``metadata.timeunit``, else its ``time`` measurement's), else ``ms``.
        constants: single-level keys (original names) and their values.
        original_names: space parameter name -> the file's name.
        rows: rows in the valid set (the file's rows minus those violating restrictions).
        failures: failure status -> rows of the valid set that failed with it.
        violations: rows that violate the restrictions (count) and up to three examples.
        left_out: records of the file the reader left out (count) and why, as
            ``reason: count; ...`` (examples in ``records.skipped``).
    """

    def __init__(
        self,
        records: TuningRecords,
        *,
        path: str,
        direction: Literal["min", "max"] | None = None,
        restrictions: Sequence[str] = (),
        name: str | None = None,
    ) -> None:
        self.records, self.path = records, path
        _refuse_lists(records)
        self.direction = _direction(records, direction)
        self.restrictions = tuple(restrictions)
        source = Path(records.source).absolute()  # a file named alone has its folder too
        stem = source.name.removesuffix(".gz").removesuffix(".json")
        self.name = name or f"{source.parent.name}/{stem}"
        self.objective = records.objective
        stated = records.units.get(self.objective)  # the file's, else Kernel Tuner's
        self.objective_unit = stated or kernel_tuner_unit(self.objective)
        self.samples_unit = records.timeunit or records.units.get("time", "ms")
        self._report_left_out(records)
        self._report_unrecorded(records)
        self._build_space(records)
        self._index_rows(records)
        self._set_values(records)
        self._report_not_positive()

    # ------------------------------------------------------------------ building
    def _report_left_out(self, records: TuningRecords) -> None:
        """Records left out make the space smaller than the file: say so, once."""
        self.left_out = _left_out(records.skipped)
        count, why = self.left_out
        if count:
            warnings.warn(
                f"{count:,} of {count + len(records):,} records of {records.source} are left "
                f"out: {why}",
                stacklevel=3,
            )

    def _report_unrecorded(self, records: TuningRecords) -> None:
        """Rows lacking the objective (or holding null) replay as failed evaluations
        (``run_error``): say how many, once."""
        missing = sum(1 for error in records.errors if error == unrecorded(records.objective))
        if missing:
            warnings.warn(
                f"{missing:,} of {len(records):,} rows of {records.source} record no "
                f"{records.objective!r}; they replay as failed evaluations (run_error)",
                stacklevel=3,
            )

    def _report_not_positive(self) -> None:
        """A time of zero or below is no measurement, yet the lowest would be taken as the
        optimum: say how many rows hold one, once (time objectives only)."""
        if self.direction != "min" or self.objective_unit not in TIME_UNITS:
            return
        ok = (self._statuses == Status.OK) & self._allowed
        bad = ok & (self._raw <= 0)
        if bad.any():
            warnings.warn(
                f"{int(bad.sum()):,} of {int(ok.sum()):,} measured rows of "
                f"{self.records.source} record a {self.objective!r} of zero or below (e.g. "
                f"{float(self._raw[bad][0]):g}), which no time can be; the lowest is taken as "
                "the optimum: check the file",
                stacklevel=3,
            )

    def _build_space(self, records: TuningRecords) -> None:
        self.constants = {k: v[0] for k, v in records.levels.items() if len(v) == 1}
        names = _identifiers(list(records.levels))
        self.original_names = {names[k]: k for k, v in records.levels.items() if len(v) > 1}
        if not self.original_names:
            raise ConfigError(f"{records.source}: every tuned parameter has a single level")
        try:
            parameters = [
                parameter_for(i, records.levels[k]) for i, k in self.original_names.items()
            ]
        except SpaceError as exc:
            raise ConfigError(f"{records.source}: {exc}") from None
        self._free = Space(parameters, name=self.name)
        self._restriction_texts = self._compile_restrictions(
            {names[k]: v for k, v in self.constants.items()}
        )
        self._parameters = parameters

    def _compile_restrictions(self, constants: dict[str, Any]) -> list[str]:
        texts = []
        for text in self.restrictions:
            try:
                expr = compile_expression(text, [*self.original_names, *constants])
            except PredicateError as exc:
                raise ConfigError(f"restrictions of {self.name}: {exc}") from None
            used = {k: constants[k] for k in expr.names if k in constants}
            texts.append(_substitute(text, used) if used else text)
        return texts

    def _index_rows(self, records: TuningRecords) -> None:
        space, n = self._free, len(records)
        index = np.empty((n, space.dims))
        for j, (ident, key) in enumerate(self.original_names.items()):
            column = np.asarray(records.columns[key], dtype=object)
            _, first, inverse = np.unique(
                column.astype(str), return_index=True, return_inverse=True
            )
            index[:, j] = space[ident].index_of(column[first].tolist())[inverse]
        label = f"row of {Path(records.source).name} ({n:,} rows)"
        membership = RowSet(dict(space.columns(index)), label=label)
        self.space = Space(self._parameters, [membership, *self._restriction_texts], name=self.name)
        allowed = self.space.valid_mask(index)
        self._report_violations(records, index, allowed)
        keys = self.space.row_keys(index).tolist()
        self._row_of = {k: i for i, k in enumerate(keys) if allowed[i]}
        self._index, self._allowed = index, allowed

    def _report_violations(
        self, records: TuningRecords, index: np.ndarray, allowed: np.ndarray
    ) -> None:
        bad = np.flatnonzero(~allowed)
        examples = [self.full_config(c) for c in self.space.to_configs(index[bad[:3]])]
        self.violations = (len(bad), examples)
        if len(bad):
            broken = self.space.violated(self.space.to_configs(index[bad[:1]])[0])
            warnings.warn(
                f"{len(bad)} of {len(allowed)} rows of {records.source} violate the "
                f"restrictions (e.g. {examples[0]} violates {broken}); they are left out",
                stacklevel=3,
            )
        if not allowed.any():
            raise ConfigError(f"the restrictions of {self.name} reject every row of the file")

    def _set_values(self, records: TuningRecords) -> None:
        raw = records.values
        invalidity = np.asarray(records.invalidity, dtype=object)
        self._statuses = np.array(
            [Status(_STATUS_OF[v]) for v in invalidity.tolist()], dtype=object
        )
        ok = self._statuses == Status.OK
        if self.direction == "max":
            if np.any(raw[ok] <= 0):
                raise ConfigError(
                    f"direction: max replays 1 / {self.objective!r}, which needs positive values; "
                    f"{self.name} records {float(np.min(raw[ok])):g}"
                )
            values = np.where(ok, 1.0 / np.where(ok, raw, 1.0), np.nan)
        else:
            values = raw
        self._raw, self._values = raw, values
        usable = ok & self._allowed
        if not usable.any():
            raise ConfigError(f"{self.name}: no row of the valid set has a measured value")
        self.rows = int(self._allowed.sum())
        failed = self._statuses[self._allowed & ~ok]
        self.failures = {s: int(np.sum(failed == s)) for s in Status if np.any(failed == s)}
        best = int(np.argmin(np.where(usable, values, np.inf)))
        self.optimum, self._best = float(values[best]), best

    # ------------------------------------------------------------------ the contract
    def evaluate(self, config: Config) -> Measurement:
        try:
            index = self.space.to_index([config])
        except SpaceError as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        row = self._row_of.get(self.space.row_keys(index)[0].item())
        if row is None:
            if not self.space.valid_mask(index)[0]:
                broken = self.space.violated(config)
                return Measurement.failure(Status.INVALID, f"violates {broken}")
            return Measurement.failure(Status.INVALID, "absent from the file")
        status = self._statuses[row]
        if status is not Status.OK:
            return Measurement.failure(status, self.records.errors[row])
        metrics = {self.objective: float(self._raw[row])} if self.direction == "max" else {}
        return Measurement.success(
            float(self._values[row]), samples=self.records.samples[row], **metrics
        )

    def best_known(self) -> Config:
        return self.space.to_configs(self._index[self._best])[0]

    def data_digest(self) -> str:
        """The digest of the replayed rows (configurations, statuses, recorded values)."""
        statuses = np.array([s.value for s in self._statuses], dtype=object)
        return table_digest(self._index, statuses, self._raw)

    def describe(self) -> dict[str, Any]:
        renamed = {k: v for k, v in self.original_names.items() if k != v}
        return {
            "name": self.name,
            "path": self.path,
            "format": self.records.format,
            "objective": self.objective,
            "direction": self.direction,
            "restrictions": list(self.restrictions),
            "constants": dict(self.constants),
            "renamed": renamed,
        }

    # ------------------------------------------------------------------ the rows
    @property
    def failed_rows(self) -> int:
        """Rows of the valid set that failed (each costs an evaluation when proposed)."""
        return sum(self.failures.values())

    def measured_values(self, valid_only: bool = True) -> np.ndarray:
        """The objective (as minimised) of the valid set's measured rows (every measured
        row with ``valid_only=False``)."""
        ok = self._statuses == Status.OK
        return self._values[ok & self._allowed if valid_only else ok].copy()

    def full_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """A configuration under the file's names, constants included."""
        out = {self.original_names.get(k, k): v for k, v in config.items()}
        return {**out, **self.constants}


def kt_cache_problem(
    path: Annotated[str | os.PathLike[str], InputFile(searched=True)],
    objective: str | None = None,
    direction: Literal["min", "max"] | None = None,
    restrictions: list[str] | None = None,
    label: str | None = None,
) -> KtCacheProblem:
    """Replay a Kernel Tuner cache or T4 results file (``.json`` or ``.json.gz``).

    Args:
        path: the file, or its path under ``shared/data`` (``kt-caches/gemm/RTX_3090.json.gz``).
        objective: the recorded field to replay (default: the file's objective, ``time``).
        direction: ``min`` or ``max`` (the tuner minimises 1/value); default the file's
            (a T4 file's ``metadata.direction``), else Kernel Tuner's for the objective
            (``time`` minimised, ``GFLOP/s``, ``GB/s``, ... maximised; any other needs one).
        restrictions: Kernel Tuner restriction strings (``"block_size_x*block_size_y<=1024"``).
        label: the problem's name in journals and reports (default: ``<folder>/<file
            stem>``, e.g. ``gemm/RTX_3090``).

    Raises:
        DataNotFoundError: the file is neither at ``path`` nor under ``shared/data``.
        ConfigError: an unreadable file, an objective no record holds, a restriction
            naming an unknown parameter, ``direction`` not min/max, none given for an
            objective whose direction neither the file nor Kernel Tuner states, or T4
            ``metadata`` that does not match the configurations.
    """
    if direction not in ("min", "max", None):
        raise ConfigError(f"direction must be 'min' or 'max', not {direction!r}")
    resolved = find_data(str(path), option="path", here=True)
    records = read_tuning_file(resolved, objective)
    return KtCacheProblem(
        records, path=str(path), direction=direction, restrictions=restrictions or (), name=label
    )
