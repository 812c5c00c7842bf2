"""Property test of the command line: random YAML documents, predicate strings, CSV
tables and journal files never give a traceback, always exit 0 or 2, and never create a
file outside the journal (and report) paths.

Bounded (a few dozen examples per property) and derandomized, so it is fast and its
examples are the same on every run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpautotune.cli import app

runner = CliRunner()
#: Examples per property (more with GPAUTOTUNE_PROPERTY_EXAMPLES, for a longer search).
EXAMPLES = int(os.environ.get("GPAUTOTUNE_PROPERTY_EXAMPLES", "30"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
JOURNAL = {"j.db", "j.db-wal", "j.db-shm"}

# ------------------------------------------------------------------ inputs
TOKENS = [
    "x", "y", "z", "0", "1", "2", "-1", "3.5", "1e308", "9", "**", "+", "-", "*", "/", "//",
    "%", "<", "<=", "==", "!=", ">", "and", "or", "not", "in", "(", ")", ",", "(1, 2)", "[4]",
    "'abc'", "min(", "max(", "abs(", "log2(", "ceil(", "__import__(", "x.y", "x[0]", "lambda",
    "True", "None",
]  # fmt: skip
predicates = st.one_of(
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12).map(" ".join),
    st.text(max_size=40),
    st.builds(
        lambda n, op: op.join(["x"] * n) + " > 0",
        st.integers(1, 300),
        st.sampled_from([" + ", " ** "]),
    ),
)
cells = st.one_of(
    st.integers(-2, 9).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "abc", "nan", "inf", "-inf", '"1,2"', "1e999"]),
)
tables = st.tuples(
    st.lists(st.sampled_from(["x", "y", "time", "other", ""]), min_size=0, max_size=4),
    st.lists(st.lists(cells, min_size=0, max_size=5), max_size=8),
).map(lambda t: "\n".join([",".join(t[0]), *(",".join(row) for row in t[1])]) + "\n")
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(), st.text(max_size=12)
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(
    ["problem", "strategy", "budget", "seed", "storage", "batch_size", "label", "warm_start"]
)
tuning_files = st.dictionaries(keys, documents, max_size=6)


def replay_file(constraints: list[str], budget: int, strategy: str) -> dict:
    return {
        "problem": {
            "name": "replay",
            "data": "t.csv",
            "objective": "time",
            "parameters": [
                {"name": "x", "kind": "int", "low": 1, "high": 4},
                {"name": "y", "kind": "ordinal", "levels": [1, 2, 4, 8]},
            ],
            "constraints": constraints,
        },
        "strategy": {"name": strategy},
        "budget": budget,
        "seed": 1,
    }


# ------------------------------------------------------------------ checks
@contextlib.contextmanager
def workdir(base: Path) -> Iterator[Path]:
    """A fresh folder as the working directory (relative paths stay inside it)."""
    folder = Path(os.path.realpath(base)) / f"ex{len(list(base.iterdir()))}"
    folder.mkdir()
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(before)


def check(args: list[str], folder: Path, allowed: set[str]) -> None:
    """Exit 0 or 2, no traceback, no file but the inputs and the allowed outputs."""
    inputs = {p.name for p in folder.iterdir()}
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 2), f"{args}: exit {result.exit_code}: {result.output}"
    assert "Traceback" not in result.output, result.output
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    created = {str(p.relative_to(folder)) for p in folder.rglob("*")} - inputs
    assert created <= allowed, f"{args} created {sorted(created - allowed)}"


@SETTINGS
@given(document=st.one_of(tuning_files, documents))
def test_random_tuning_files(tmp_path, document) -> None:
    with workdir(tmp_path) as folder:
        (folder / "t.yaml").write_text(yaml.safe_dump(document, allow_unicode=True))
        check(["tune", "t.yaml", "--db", "j.db", "--budget", "2"], folder, JOURNAL)
        check(["space", "t.yaml"], folder, set())


@SETTINGS
@given(
    constraints=st.lists(predicates, max_size=2),
    table=st.one_of(tables, st.just("x,y,time\n1,1,3.0\n2,2,2.0\n3,4,1.0\n4,8,0.5\n")),
    budget=st.integers(1, 4),
    strategy=st.sampled_from(["random", "sobol", "greedy"]),
)
def test_random_predicates_and_tables(tmp_path, constraints, table, budget, strategy) -> None:
    with workdir(tmp_path) as folder:
        (folder / "t.csv").write_text(table)
        (folder / "t.yaml").write_text(yaml.safe_dump(replay_file(constraints, budget, strategy)))
        check(["tune", "t.yaml", "--db", "j.db"], folder, JOURNAL)
        check(["space", "t.yaml"], folder, set())


@SETTINGS
@given(content=st.binary(max_size=200), command=st.sampled_from(["show", "export", "report"]))
def test_random_journal_files(tmp_path, content, command) -> None:
    with workdir(tmp_path) as folder:
        (folder / "j.db").write_bytes(content)
        extra = {"export": ["--csv", "out.csv"], "report": ["--out", "rep"]}.get(command, [])
        check([command, "j.db", *extra], folder, set())
        assert (folder / "j.db").read_bytes() == content


def test_the_generators_reach_valid_runs(tmp_path) -> None:
    """The table and predicate generators include working runs (so the properties also
    cover exit 0), e.g. the fixed table without constraints."""
    with workdir(tmp_path) as folder:
        (folder / "t.csv").write_text("x,y,time\n1,1,3.0\n2,2,2.0\n3,4,1.0\n4,8,0.5\n")
        (folder / "t.yaml").write_text(yaml.safe_dump(replay_file(["x <= y"], 3, "random")))
        result = runner.invoke(app, ["tune", "t.yaml", "--db", "j.db"])
        assert result.exit_code == 0 and "best value 0.5" in result.output
