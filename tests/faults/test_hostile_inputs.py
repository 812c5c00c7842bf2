"""Fault injection: hostile or mistaken input gets one line naming what to fix, exit 2.

Every case here was a traceback (or a hang, or silently wrong) once; the command line
must print a single ``error:`` line and exit with code 2, and create no journal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app

runner = CliRunner()

REPLAY = """problem:
  name: replay
  data: {csv}
  objective: time
  parameters:
    - {{name: x, kind: int, low: 1, high: 4}}
  constraints: {constraints}
strategy: {{name: random}}
budget: 3
seed: 1
storage: {db}
"""
GOOD_CSV = "x,time\n1,4.0\n2,3.0\n3,2.0\n4,1.0\n"


def _replay(tmp_path: Path, constraints: str = "[]", csv: str = GOOD_CSV) -> Path:
    (tmp_path / "t.csv").write_text(csv)
    config = tmp_path / "t.yaml"
    text = REPLAY.format(csv=tmp_path / "t.csv", constraints=constraints, db=tmp_path / "t.db")
    config.write_text(text)
    return config


def one_error_line(args: list[str], fragment: str) -> str:
    """Run the command; it must fail with exit code 2 and one ``error:`` line holding
    ``fragment``, no traceback."""
    result = runner.invoke(app, args)
    lines = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert result.exit_code == 2, result.output + repr(result.exception)
    assert "Traceback" not in result.output and len(lines) == 1, result.output
    assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("constraint", "fragment"),
    [
        ("x ** 9 ** 9 ** 9 > 0", "exponent '9 ** 9 ** 9'"),
        ("x < 'abc'", "cannot be evaluated"),
        (" + ".join(["x"] * 500) + " > 0", "nested 502 levels deep"),
        ("-" * 20_000 + "x > 0", "20,005 characters"),
        ("-" * 5_000 + "x > 0", "cannot parse"),
    ],
    ids=["huge-exponent", "string-comparison", "500-terms", "20000-minus", "5000-minus"],
)
def test_hostile_predicates(tmp_path, constraint, fragment) -> None:
    one_error_line(["tune", str(_replay(tmp_path, repr([constraint])))], fragment)
    assert not (tmp_path / "t.db").exists()


def test_a_negative_integer_power_is_a_fraction(tmp_path) -> None:
    """``x ** -1 < 1`` means ``1/x < 1``: it admits x = 2, 3, 4 and measures them."""
    result = runner.invoke(app, ["tune", str(_replay(tmp_path, "['x ** -1 < 1']"))])
    assert result.exit_code == 0, result.output
    from gpautotune.storage import Journal

    with Journal(tmp_path / "t.db", read_only=True) as journal:
        assert sorted(t.config["x"] for t in journal.trials(1)) == [2, 3, 4]


@pytest.mark.parametrize(
    ("csv", "fragment"),
    [
        ("x,time\n1,4.0\n2,abc\n", "holds text that is not a number ('abc' in line 3"),
        ("x,time\n", "no row inside the space with a finite 'time'"),
        ("x,time\n1,nan\n2,inf\n", "no row inside the space with a finite 'time'"),
    ],
    ids=["text-objective", "header-only", "no-finite-value"],
)
def test_broken_replay_tables(tmp_path, csv, fragment) -> None:
    one_error_line(["tune", str(_replay(tmp_path, csv=csv))], fragment)


def test_nan_rows_are_failures_and_the_optimum_stays_finite(tmp_path) -> None:
    csv = "x,time\n1,nan\n2,inf\n3,2.0\n4,\n"
    result = runner.invoke(app, ["tune", str(_replay(tmp_path, csv=csv)), "--budget", "4"])
    assert result.exit_code == 0, result.output
    assert "known optimum 2;" in result.output and "optimum nan" not in result.output
    assert "run_error 3" in result.output


def test_a_file_that_is_not_utf8(tmp_path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("problem: {name: booth}\nbudget: 3\n# café\n".encode("latin-1"))
    one_error_line(["tune", str(path)], "not UTF-8 text (byte 0xe9")


@pytest.mark.parametrize("where", ["option", "file"])
def test_a_negative_seed(tmp_path, where) -> None:
    path = tmp_path / "b.yaml"
    seed = "seed: -1\n" if where == "file" else ""
    path.write_text(f"problem: {{name: booth}}\nbudget: 3\n{seed}storage: {tmp_path / 'b.db'}\n")
    args = ["tune", str(path), *(["--seed", "-1"] if where == "option" else [])]
    one_error_line(args, "seed")
    assert not (tmp_path / "b.db").exists()


def test_db_under_an_existing_file(tmp_path) -> None:
    (tmp_path / "a-file").write_text("")
    path = tmp_path / "b.yaml"
    path.write_text("problem: {name: booth}\nbudget: 3\n")
    db = tmp_path / "a-file" / "sub" / "j.db"
    one_error_line(["tune", str(path), "--db", str(db)], "Not a directory")


def test_explain_with_no_paths(tmp_path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(f"problem: {{name: booth}}\nbudget: 6\nstorage: {tmp_path / 'b.db'}\n")
    assert runner.invoke(app, ["tune", str(path)]).exit_code == 0
    one_error_line(["explain", str(tmp_path / "b.db"), "--paths", "0"], "paths")


SPAPT = "problem: {{name: spapt/bicg, {options}}}\nbudget: 2\nstorage: {db}\n"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ("compiler: no-such-cc", "the C compiler 'no-such-cc' is not on PATH"),
        ("cflags: [-fno-such-flag]", "the baseline does not build or run with gcc -fno-such-flag"),
        ("compiler: 'false'", "the baseline does not build or run with false"),
        ("rtol: -0.1", "rtol must be >= 0"),
    ],
    ids=["gcc-missing", "bad-flag", "failing-compiler", "negative-rtol"],
)
def test_spapt_set_ups_that_cannot_work(tmp_path, options, fragment) -> None:
    if "gcc" in fragment and shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    path = tmp_path / "spapt.yaml"
    path.write_text(SPAPT.format(options=options, db=tmp_path / "s.db"))
    one_error_line(["tune", str(path)], fragment)
    assert not (tmp_path / "s.db").exists()


def test_a_comparison_file_naming_code(tmp_path) -> None:
    pwned = tmp_path / "pwned"
    path = tmp_path / "c.yaml"
    path.write_text(
        f"problems: [{{name: 'os:system', command: 'touch {pwned}'}}]\n"
        f"strategies: [{{name: random}}]\nrepetitions: 1\nbudget: 2\nstorage: {tmp_path / 'c.db'}\n"
    )
    one_error_line(["compare", str(path), "--workers", "1"], "--allow-imports")
    assert not pwned.exists() and not (tmp_path / "c.db").exists()


def test_an_empty_icd_folder_means_no_opencl_driver(tmp_path) -> None:
    """OCL_ICD_VENDORS set to a folder without drivers: no device, one line (the
    pyopencl wheel's loader would still add its bundled PoCL from its own folder)."""
    pytest.importorskip("pyopencl")
    import subprocess
    import sys

    from tests.faults.processes import env as checkout_env

    empty = tmp_path / "vendors"
    empty.mkdir()
    env = {**checkout_env(), "OCL_ICD_VENDORS": str(empty)}
    cmd = [sys.executable, "-m", "gpautotune", "devices"]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "error: no OpenCL platform found" in result.stderr
    assert f"OCL_ICD_VENDORS={empty} names no usable driver" in result.stderr
