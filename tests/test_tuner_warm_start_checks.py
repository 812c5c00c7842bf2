"""Warm-start trials given in Python are checked as a warm-start file's rows are (one
check, ``refuse_outside``): the message names the trials of the list, not rows."""

import pytest

from gpautotune import tune
from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.measurement import Measurement
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.trial import Origin, Trial
from gpautotune.tuner._checks import check_warm_start, refuse_outside

SPACE = Space([IntRange("x", 0, 5), IntRange("y", 0, 5)], constraints=["x + y <= 6"])


def _trials(*configs):
    return [
        Trial(i, c, Measurement.success(1.0), origin=Origin.WARM_START)
        for i, c in enumerate(configs)
    ]


def _objective(config):
    return float(config["x"] + config["y"])


@pytest.mark.parametrize(
    ("configs", "pattern"),
    [
        (
            ({"x": 1, "y": 1}, {"x": 9, "y": 1}),
            r"warm_start: 1 of 2 trials are not configurations of the space \(trial 1, "
            r"\{'x': 9, 'y': 1\}: .*9.*\); leave them out",
        ),
        (
            ({"x": 1},),
            r"warm_start: 1 of 1 trials are not configurations .*missing parameter\(s\) \['y'\]",
        ),
        (
            ({"x": 1, "y": 1, "z": 0},),
            r"trial 0, .*unknown parameter\(s\) \['z'\]; the space has \['x', 'y'\]",
        ),
        (
            ({"x": 5, "y": 5}, {"x": 4, "y": 4}),
            r"warm_start: 2 of 2 trials break the space's constraints \(trial 0, "
            r"\{'x': 5, 'y': 5\} breaks \['x \+ y <= 6'\]\); leave them out",
        ),
    ],
)
def test_python_trials_outside_the_space_are_refused_before_the_run_opens(
    tmp_path, configs, pattern
):
    db = tmp_path / "w.db"
    with pytest.raises(SpaceError, match=pattern):
        tune(_objective, "random", 3, space=SPACE, storage=db, warm_start=_trials(*configs))
    assert Journal(db).runs() == []


def test_trials_and_rows_are_one_check_with_their_own_words():
    configs = [{"x": 1, "y": 1}, {"x": 6, "y": 1}]
    with pytest.raises(ConfigError, match=r"f.csv: 1 of 2 rows .*\(row 3: .*remove them"):
        refuse_outside(SPACE, configs, "f.csv", lambda i: f"row {i + 2}")
    with pytest.raises(SpaceError, match=r"warm_start: 1 of 2 trials .*\(trial 1, .*leave them"):
        check_warm_start(SPACE, _trials(*configs))
    check_warm_start(SPACE, _trials({"x": 1, "y": 1}, {"x": 1, "y": 5}))  # inside: no error
