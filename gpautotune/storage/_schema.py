"""The journal's tables (SQLite DDL, created when a journal is opened) and the fixes named
when the database fails (matched on SQLite's message)."""

from __future__ import annotations

__all__ = ["HINTS", "SCHEMA"]

#: The tables (runs, trials, configurations in flight, owners, data digests, objectives,
#: problems, report settings).
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    problem TEXT NOT NULL,
    problem_settings TEXT NOT NULL,
    strategy TEXT NOT NULL,
    strategy_settings TEXT NOT NULL,
    seed INTEGER,
    budget INTEGER,
    space TEXT NOT NULL,
    versions TEXT NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL DEFAULT 'running',
    label TEXT
);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    number INTEGER NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    samples TEXT NOT NULL,
    metrics TEXT NOT NULL,
    error TEXT,
    info TEXT NOT NULL,
    origin TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_s REAL NOT NULL,
    UNIQUE (run_id, number)
);
CREATE INDEX IF NOT EXISTS trials_run ON trials(run_id);
CREATE TABLE IF NOT EXISTS running_trials (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    config TEXT NOT NULL,
    info TEXT NOT NULL,
    dispatched_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS running_run ON running_trials(run_id);
CREATE TABLE IF NOT EXISTS run_owners (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process_started REAL NOT NULL,
    since REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS run_data (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    digest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_objective (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    unit TEXT NOT NULL,
    direction TEXT NOT NULL,
    samples_unit TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS problem_catalog (
    problem TEXT NOT NULL,
    problem_settings TEXT NOT NULL,
    section TEXT NOT NULL,
    optimum REAL,
    PRIMARY KEY (problem, problem_settings)
);
CREATE TABLE IF NOT EXISTS report_settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


HINTS = {
    "full": "free space, or give the journal another place (--db)",
    "readonly": "the journal or its folder is read-only: give a writable place (--db)",
    "unable to open": "no writable journal can be there: give another place (--db)",
    "locked": "another process holds the journal locked for too long",
}
