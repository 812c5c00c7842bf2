"""The trial journal (SQLite) and its tables (pandas, CSV, Parquet, warm starts)."""

from gpautotune.storage._journal import Journal
from gpautotune.storage._records import CatalogEntry, RunRecord, RunSpec, package_versions
from gpautotune.storage._tables import export_table, import_csv, trials_frame

__all__ = [
    "CatalogEntry",
    "Journal",
    "RunRecord",
    "RunSpec",
    "export_table",
    "import_csv",
    "package_versions",
    "trials_frame",
]
