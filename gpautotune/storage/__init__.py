"""The trial journal (SQLite) and its tables (pandas, CSV, Parquet, warm starts), and the
field's exchange formats: Kernel Tuner caches and T4 results files in, T4 out."""

from gpautotune.storage._identity import RunNameError, check_run_name
from gpautotune.storage._journal import Journal, RunOwnedError
from gpautotune.storage._kernel_tuner import (
    HIGHER_IS_BETTER,
    STATUS_INVALIDITY,
    TIME_UNITS,
    TuningRecords,
    listed,
    read_tuning_file,
    unrecorded,
)
from gpautotune.storage._objective import RunObjective
from gpautotune.storage._opening import check_not_journal
from gpautotune.storage._records import (
    CatalogEntry,
    RunningTrial,
    RunRecord,
    RunSpec,
    package_versions,
)
from gpautotune.storage._t4 import (
    export_t4,
    kernel_tuner_unit,
    metric_unit,
    t4_document,
    validate_t4,
)
from gpautotune.storage._tables import (
    export_table,
    import_csv,
    import_table,
    table_format,
    trials_frame,
)
from gpautotune.storage._url import journal_path

__all__ = [
    "HIGHER_IS_BETTER",
    "STATUS_INVALIDITY",
    "TIME_UNITS",
    "CatalogEntry",
    "Journal",
    "RunNameError",
    "RunObjective",
    "RunOwnedError",
    "RunRecord",
    "RunSpec",
    "RunningTrial",
    "TuningRecords",
    "check_not_journal",
    "check_run_name",
    "export_t4",
    "export_table",
    "import_csv",
    "import_table",
    "journal_path",
    "kernel_tuner_unit",
    "listed",
    "metric_unit",
    "package_versions",
    "read_tuning_file",
    "t4_document",
    "table_format",
    "trials_frame",
    "unrecorded",
    "validate_t4",
]
