"""One version (pyproject.toml), read at run time from the installed package: `webhost --version`, the
package's `__version__` and the changelog's newest release all say it."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import webhost

ROOT = Path(__file__).resolve().parents[2]


def declared() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    return version


def test_webhost_version_says_the_version_pyproject_declares() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webhost", "--version"], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == f"webhost {declared()}"


def test_the_installed_metadata_is_the_one_source() -> None:
    # A mismatch means the package was installed from another pyproject.toml: scripts/install again.
    assert importlib.metadata.version("webhost") == declared() == webhost.__version__


def test_the_changelog_names_the_version_as_its_newest_release() -> None:
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases[0] == declared()
    assert releases == sorted(releases, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
