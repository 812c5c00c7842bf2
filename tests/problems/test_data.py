"""Finding the shared data without an editable install."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpautotune.exceptions import DataNotFoundError
from gpautotune.problems import _data, find_data

NAME = "i23-test/table.csv"  # not in the real shared/data


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """The package seen as installed in a site-packages folder, far from any checkout."""
    site = tmp_path / "venv" / "site-packages" / "gpautotune" / "problems"
    monkeypatch.setattr(_data, "__file__", str(site / "_data.py"))
    monkeypatch.delenv(_data.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path


def _put(folder, name=NAME):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x,t\n1,2\n")
    return path


def test_the_current_folders_parents_are_searched(installed, monkeypatch):
    data = _put(installed / "project" / "shared" / "data")
    inside = installed / "project" / "checkout" / "configs"
    inside.mkdir(parents=True)
    monkeypatch.chdir(inside)
    assert find_data(NAME) == data


def test_the_environment_variable_may_list_several_folders(installed, monkeypatch):
    data = _put(installed / "second")
    monkeypatch.setenv(_data.ENV_VAR, f"{installed / 'first'}:{installed / 'second'}")
    monkeypatch.chdir(installed)
    assert find_data(NAME) == data


def test_the_user_data_folder_is_searched_last(installed, monkeypatch):
    data = _put(installed / "xdg" / "gpautotune")
    monkeypatch.chdir(installed)
    assert find_data(NAME) == data
    assert _data.data_roots()[-1] == installed / "xdg" / "gpautotune"


def test_a_missing_file_names_the_fixes(installed, monkeypatch):
    monkeypatch.chdir(installed)
    with pytest.raises(DataNotFoundError) as info:
        find_data(NAME)
    message = str(info.value)
    assert "GPAUTOTUNE_DATA" in message and "--set problem.data=PATH" in message
    assert "--data" not in message.replace("problem.data", "")


def test_an_explicit_path_is_used_as_given(tmp_path):
    data = _put(tmp_path, "mine.csv")
    assert find_data(NAME, data) == data
    with pytest.raises(DataNotFoundError, match="fix the path"):
        find_data(NAME, tmp_path / "nope.csv")


def test_a_missing_file_lists_every_place_looked_in_in_order(installed, monkeypatch):
    here = installed / "elsewhere"
    here.mkdir()
    _put(installed / "data", "other.csv")
    monkeypatch.setenv(_data.ENV_VAR, str(installed / "data"))
    monkeypatch.chdir(here)
    name = "mine/nothere.json"
    with pytest.raises(DataNotFoundError) as info:
        find_data(name, option="path", here=True)
    message = str(info.value)
    places = [
        f"the working directory ({here.resolve()})",
        "the folder of the YAML file that names it",
        f"$GPAUTOTUNE_DATA ({installed / 'data'})",
        "shared/data/ in the working directory and in each folder above it",
        "shared/data/ in the package's folder",
        f"the user's data folder ({installed / 'xdg' / 'gpautotune'})",
    ]
    assert [message.index(p) for p in places] == sorted(message.index(p) for p in places)
    # which exist: $GPAUTOTUNE_DATA's, and any shared/data/ above the temporary folder
    assert str(installed / "data") in message.split("Of the data folders")[1]
    assert "found the data folders" not in message and "\n" not in message
    _put(here, name)
    monkeypatch.chdir(here)
    assert find_data(name, option="path", here=True) == Path(name)
