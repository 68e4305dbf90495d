"""WEBHOST_SECRET: how replicas with data folders of their own share one deployment secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from webhost.app import deployment_secret, load_secret
from webhost.cli import SettingsProblem, main, settings_from
from webhost.settings import Settings


def test_the_variable_wins_over_the_data_folder_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBHOST_SECRET", "  " + "k" * 40 + "\n")
    settings = settings_from(["serve", "--data-dir", str(tmp_path / "data")])
    assert deployment_secret(settings) == b"k" * 40  # stripped, as the sandbox proxy reads it
    assert not (tmp_path / "data" / "secret").exists()
    assert "k" * 40 not in repr(settings)


def test_the_data_folder_secret_copied_into_the_variable_is_the_same_secret(tmp_path: Path) -> None:
    from_file = load_secret(tmp_path / "one")
    again = deployment_secret(Settings(data_dir=tmp_path / "two", secret=from_file.decode()))
    assert again == from_file


def test_a_short_secret_is_refused_with_the_variable_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOST_SECRET", "too-short")
    with pytest.raises(SettingsProblem) as caught:
        settings_from(["serve"])
    assert "WEBHOST_SECRET" in str(caught.value) and "32" in str(caught.value)
    assert "too-short" not in str(caught.value)


def test_serve_refuses_a_cut_secret_file_with_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `secret` file shorter than a secret used to be replaced silently at start, which made every sealed
    token, input value and cookie unreadable (issue 24)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "secret").write_bytes(b"0123456789abcdef")  # cut in half
    assert main(["serve", "--data-dir", str(data)]) == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "fewer than the 32 of a secret" in message and "--rotate-secret" in message
    assert (data / "secret").read_bytes() == b"0123456789abcdef"
