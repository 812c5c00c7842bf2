"""Comparison files: problems × strategies × repetitions × budget, validated with pydantic.

A comparison file::

    problems:                        # or `problem: {...}` for one
      - {name: laplacian-replay}     # + the problem's own options
    strategies:
      - {name: random, label: RS}    # + the strategy's own options
      - {name: gpr, label: GPR, repetitions: 200, n_init: 13}
      - {name: gpr, label: GPR-q6, batch_size: 6}              # 6 asked at a time
      - {name: gpr, label: GPR-trapped, seeds: [61, 116, 122]}  # these seeds only
    repetitions: 1000                # per strategy, unless the strategy says otherwise
    budget: 120
    seed: 1                          # first seed: repetition r uses seed + r
    storage: results/compare.db      # one SQLite journal for every repetition
    workers: 2                       # default: the machine's cores
    checkpoints: [30, 60, 90, 120]   # budgets the report tabulates
    reference: RS                    # the strategy others are tested against

Each repetition is one tuning run in the journal, identified like any run by problem,
strategy, options and seed, plus the strategy's display label as the run's ``label`` (so
renaming a label starts new repetitions). A problem ``name`` that contains a colon,
``package.module:factory``, names a factory to import, for problems outside the registry.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from gpautotune.config import (
    Integer,
    Section,
    build_strategy,
    check_problem,
    check_strategy,
    load_yaml_model,
    section_inputs,
)
from gpautotune.exceptions import ConfigError
from gpautotune.problems import Problem
from gpautotune.storage import RunSpec
from gpautotune.tuner import run_spec

__all__ = [
    "ComparisonConfig",
    "StrategyEntry",
    "Repetition",
    "default_checkpoints",
    "expand",
    "load_comparison",
]


class StrategyEntry(Section):
    """``{name, label?, repetitions? | seeds?, budget?, batch_size?, <options>}``: one
    strategy of a comparison."""

    label: str | None = None
    repetitions: Integer | None = Field(None, gt=0)
    #: This strategy's budget when it differs from the comparison's (LHS and DLMT use
    #: 125 evaluations in seed 003 Table 11.3).
    budget: Integer | None = Field(None, gt=0)
    #: Configurations asked at a time (as ``gpautotune tune``'s ``batch_size``); give a
    #: batched entry its own label, since the label, not the batch, names its runs.
    batch_size: Integer = Field(1, gt=0)
    #: Explicit seeds instead of ``repetitions`` consecutive ones from the file's ``seed``
    #: (e.g. the seeds where another strategy got trapped).
    seeds: list[Integer] | None = Field(None, min_length=1)

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and (len(set(value)) < len(value) or min(value) < 0):
            raise ValueError(f"seeds must be distinct and non-negative, got {value}")
        return value

    @model_validator(mode="after")
    def _seeds_or_repetitions(self) -> StrategyEntry:
        if self.seeds is not None and self.repetitions is not None:
            raise ValueError(
                f"strategy {self.display!r} gives both `seeds` and `repetitions`; keep one"
            )
        return self

    @property
    def display(self) -> str:
        """The label shown in reports (the strategy's name unless a label is given)."""
        return self.label or self.name


class ComparisonConfig(BaseModel):
    """A comparison: every strategy on every problem, repeated with consecutive seeds.

    Attributes:
        problems: the problems (registry sections, or ``module:factory`` names).
        strategies: the strategies with their options, labels and repetition counts.
        repetitions: repetitions of a strategy that does not give its own (``repetitions``
            or ``seeds``); needed only when some strategy gives neither.
        budget: evaluations per repetition.
        seed: the first seed; repetition ``r`` (0-based) uses ``seed + r``.
        storage: the SQLite journal that holds every repetition.
        workers: local Dask workers (default: the machine's cores).
        checkpoints: budgets at which reports tabulate results (default: quarters).
        reference: the label the others are tested against (default: ``random`` if
            present, else the first strategy).
        output: the report folder (default: next to the journal, ``<stem>-report``).
        hardware_slots: repetitions of a hardware-measuring problem allowed at once.
        hardware_resources: Dask worker resources a hardware repetition needs instead
            (e.g. ``{GPU: 1}`` on workers started with ``--resources GPU=1``).
        retries: times Dask reruns a repetition that raised.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    problems: list[Section] = Field(min_length=1)
    strategies: list[StrategyEntry] = Field(min_length=1)
    _file_labels: list[str] | None = PrivateAttr(default=None)
    repetitions: Integer | None = Field(None, gt=0)
    budget: Integer = Field(gt=0)
    seed: Integer = Field(0, ge=0)
    storage: str
    workers: Integer | None = Field(None, gt=0)
    checkpoints: list[Integer] | None = None
    reference: str | None = None
    output: str | None = None
    hardware_slots: Integer = Field(1, gt=0)
    hardware_resources: dict[str, float] | None = None
    retries: Integer = Field(2, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _single_problem(cls, data: Any) -> Any:
        if isinstance(data, dict) and "problem" in data:
            if "problems" in data:
                raise ValueError("give either `problem` or `problems`, not both")
            data = {**data, "problems": [data["problem"]]}
            del data["problem"]
        return data

    @field_validator("storage")
    @classmethod
    def _journal_file(cls, value: str) -> str:
        from gpautotune.exceptions import StorageError
        from gpautotune.storage import journal_path

        try:
            path = journal_path(value)
        except StorageError as exc:
            raise ValueError(str(exc)) from None
        if path == ":memory:":
            raise ValueError("a comparison's journal must be a file (its workers share it)")
        return path

    @field_validator("checkpoints")
    @classmethod
    def _sorted_checkpoints(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and (not value or any(c < 1 for c in value)):
            raise ValueError("checkpoints must be a non-empty list of positive budgets")
        return None if value is None else sorted(set(value))

    @model_validator(mode="after")
    def _consistent(self) -> ComparisonConfig:
        labels = [s.display for s in self.strategies]
        duplicates = sorted({x for x in labels if labels.count(x) > 1})
        if duplicates:
            raise ValueError(
                f"strategy labels {duplicates} repeat; give each strategy a distinct `label`"
            )
        sections = [
            json.dumps({"name": p.name, **p.options}, sort_keys=True, default=str)
            for p in self.problems
        ]
        twice = sorted(
            {p.name for p, t in zip(self.problems, sections, strict=True) if sections.count(t) > 1}
        )
        if twice:
            raise ValueError(
                f"problems {twice} are listed twice with the same options; list each once"
            )
        checkpoint_budget = max([self.budget, *(s.budget or 0 for s in self.strategies)])
        bare = [s.display for s in self.strategies if s.repetitions is None and s.seeds is None]
        if self.repetitions is None and bare:
            raise ValueError(
                f"repetitions: give the file's `repetitions`, or `repetitions` or `seeds` to "
                f"the strategies {bare}"
            )
        if self.reference is not None and self.reference not in labels:
            raise ValueError(
                f"reference {self.reference!r} is none of the strategy labels {labels}"
            )
        if self.checkpoints and self.checkpoints[-1] > checkpoint_budget:
            raise ValueError(
                f"checkpoint {self.checkpoints[-1]} exceeds every budget (at most "
                f"{checkpoint_budget})"
            )
        return self

    def repetitions_of(self, entry: StrategyEntry) -> int:
        if entry.seeds is not None:
            return len(entry.seeds)
        repetitions = entry.repetitions or self.repetitions
        assert repetitions is not None  # _consistent: every strategy has some
        return repetitions

    def seed_of(self, entry: StrategyEntry, r: int) -> int:
        """The seed of ``entry``'s repetition ``r`` (0-based)."""
        return entry.seeds[r] if entry.seeds is not None else self.seed + r

    def budget_of(self, entry: StrategyEntry) -> int:
        return entry.budget or self.budget

    def report_checkpoints(self) -> list[int]:
        """The checkpoints, or the budget's quarters."""
        return self.checkpoints or default_checkpoints(self.budget)

    def reference_label(self) -> str:
        labels = [s.display for s in self.strategies]
        if self.reference:
            return self.reference
        return next((s.display for s in self.strategies if s.name == "random"), labels[0])

    def report_dir(self) -> Path:
        if self.output:
            return Path(self.output)
        storage = Path(self.storage)
        return storage.with_name(f"{storage.stem}-report")

    def file_labels(self) -> list[str]:
        """The labels of the file's strategies, in order (a selection's whole file's)."""
        return self._file_labels or [s.display for s in self.strategies]

    def select(self, labels: list[str] | None) -> ComparisonConfig:
        """Only the strategies whose labels are given (all when None); the reference and
        the order of the labels stay the file's, so that parts run with ``--only`` report
        as the whole comparison would."""
        if not labels:
            return self
        known = [s.display for s in self.strategies]
        unknown = sorted(set(labels) - set(known))
        if unknown:
            raise ConfigError(f"no strategy labelled {unknown}; the comparison has {known}")
        chosen = self.model_copy(
            update={
                "strategies": [s for s in self.strategies if s.display in labels],
                "reference": self.reference_label(),
            }
        )
        chosen._file_labels = self.file_labels()
        return chosen


def default_checkpoints(budget: int) -> list[int]:
    """Quarters of the budget (at least 1), ending at the budget."""
    return sorted({max(1, round(budget * q / 4)) for q in (1, 2, 3, 4)})


def load_comparison(
    path: str | os.PathLike[str],
    *,
    allow_imports: bool = False,
    only: list[str] | None = None,
    storage: str | None = None,
) -> ComparisonConfig:
    """Read and validate a comparison YAML file, the options of each problem and strategy included.

    ``storage`` (a journal path, ``--db``) replaces the file's ``storage``, which the
    file then need not give.

    A problem named ``package.module:factory`` is imported only with ``allow_imports``
    (the user's opt-in, ``--allow-imports``): a file never runs code it names by itself.
    The problems' input files are found from the working directory, else from the
    file's folder (:func:`~gpautotune.config.section_inputs`); ``storage`` and
    ``output`` stay relative to the working directory.
    With ``only`` (labels), the other strategies are dropped before their options are
    checked, so that a strategy left out needs none of its optional packages.

    Raises:
        DataNotFoundError: the file, or an input file a problem names, does not exist.
        ConfigError: bad YAML, a bad key or value (the message names it), or a
            ``module:factory`` problem without the opt-in.
    """
    config = load_yaml_model(
        path,
        ComparisonConfig,
        "comparison",
        "problems, strategies, repetitions, budget, storage",
        replace={"storage": storage} if storage is not None else None,
        inputs=functools.partial(_comparison_inputs, allow_imports=allow_imports),
    ).select(only)
    for i, entry in enumerate(config.strategies):
        check_strategy(entry, f"{path}: strategies.{i} ({entry.name})")
    for i, section in enumerate(config.problems):
        check_problem(
            section,
            f"{path}: problems.{i} ({section.name})",
            factory_names=True,
            allow_imports=allow_imports,
        )
    return config


def _comparison_inputs(
    data: dict[str, Any], file: Path, *, allow_imports: bool = False
) -> dict[str, Any]:
    """A comparison file's ``data`` with the input files of its problems found
    (:func:`~gpautotune.config.section_inputs`; messages start with ``problems.<i>.``)."""
    out = dict(data)
    find = functools.partial(
        section_inputs, file=file, factory_names=True, allow_imports=allow_imports
    )
    if isinstance(out.get("problem"), Mapping):
        out["problem"] = find(out["problem"], where="problem.")
    if isinstance(out.get("problems"), list):
        out["problems"] = [
            find(s, where=f"problems.{i}.") if isinstance(s, Mapping) else s
            for i, s in enumerate(out["problems"])
        ]
    return out


@dataclass(frozen=True)
class Repetition:
    """One task: a strategy on a problem with one seed and budget, stored in a journal.

    Plain data (sent to Dask workers, which build the problem and strategy themselves).
    """

    problem: Section
    strategy: StrategyEntry
    index: int
    seed: int
    budget: int
    storage: str
    hardware: bool = False
    key: str = field(default="", compare=False)
    #: The user's opt-in to the code the problem section names (``--allow-imports``).
    allow_imports: bool = False
    #: The run's key without where its data lies (``RunSpec.placeless_key``; None when
    #: the problem replays no table).
    placeless_key: str | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return self.strategy.display

    def describe(self) -> str:
        return f"{self.problem.name} / {self.label} / seed {self.seed}"


def run_specs(config: ComparisonConfig, problems: list[Problem]) -> dict[tuple[int, int], RunSpec]:
    """The journal specification of each problem ``i`` and strategy ``j`` at the
    comparison's first seed (its repetitions vary the seed)."""
    return {
        (i, j): run_spec(
            problem,
            build_strategy(entry, problem, config.seed),
            seed=config.seed,
            label=entry.display,
        )
        for i, problem in enumerate(problems)
        for j, entry in enumerate(config.strategies)
    }


def expand(
    config: ComparisonConfig,
    problems: list[Problem],
    *,
    allow_imports: bool = False,
    specs: dict[tuple[int, int], RunSpec] | None = None,
) -> Iterator[Repetition]:
    """Every repetition of ``config``, interleaved (repetition 0 of everything first), with
    its journal run key (``problems`` are the built ``config.problems``, in order) and the
    user's opt-in to imports (for the workers that build the problems again)."""
    longest = max(config.repetitions_of(s) for s in config.strategies)
    specs = specs or run_specs(config, problems)
    for r in range(longest):
        for i, (section, problem) in enumerate(zip(config.problems, problems, strict=True)):
            for j, entry in enumerate(config.strategies):
                if r >= config.repetitions_of(entry):
                    continue
                seed = config.seed_of(entry, r)
                spec = dataclasses.replace(specs[i, j], seed=seed)
                yield Repetition(
                    section,
                    entry,
                    r,
                    seed,
                    config.budget_of(entry),
                    config.storage,
                    bool(problem.measures_hardware),
                    spec.key,
                    allow_imports,
                    spec.placeless_key,
                )
