"""Search spaces: typed parameters, constraint predicates, encoding and constrained sampling."""

from gpautotune.space._constraints import Constraint, Derived
from gpautotune.space._expressions import Expression, compile_expression
from gpautotune.space._membership import ROW_SET_LABEL, RowSet
from gpautotune.space._parameters import (
    Boolean,
    Categorical,
    IntRange,
    Ordinal,
    Parameter,
    PowerOfTwo,
    Real,
)
from gpautotune.space._relations import positive_numeric, valid_set_relations
from gpautotune.space._sampling import sample_index, unit_sample
from gpautotune.space._space import DEFAULT_ENUMERATION_LIMIT, Config, Space, ValidCount
from gpautotune.space._spec import space_from_spec

__all__ = [
    "DEFAULT_ENUMERATION_LIMIT",
    "Boolean",
    "Categorical",
    "Config",
    "Constraint",
    "Derived",
    "Expression",
    "IntRange",
    "Ordinal",
    "Parameter",
    "PowerOfTwo",
    "Real",
    "ROW_SET_LABEL",
    "RowSet",
    "Space",
    "ValidCount",
    "compile_expression",
    "positive_numeric",
    "sample_index",
    "space_from_spec",
    "unit_sample",
    "valid_set_relations",
]
