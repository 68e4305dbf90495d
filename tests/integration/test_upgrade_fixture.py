"""The upgrade fixture is what c4f1242's code writes: rebuilt here by running that release (taken out of this
repository's history, on this virtualenv's dependencies, which satisfy the release's), on both engines; the
rebuilt dumps have the committed ones' schema and rows, and read back after HEAD's migrations as they do."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.fixtures.upgrade.rebuild import DUMPS, HERE, RELEASE, ROOT, Fixture, rebuild
from tests.support import upgrade
from tests.support.postgres import Postgres

pytestmark = pytest.mark.anyio


def dependencies(pyproject: str) -> set[str]:
    return set(tomllib.loads(pyproject)["project"]["dependencies"])


def test_the_release_runs_on_this_virtualenv_whose_requirements_include_its_own() -> None:
    """rebuild.py runs the release on this virtualenv, which `scripts/install` makes from this tree's
    requirements: that is the release as it ran only if each of its requirements is one of this tree's. When one
    changes, install the release's own (pip install 'webhost @ git+file://...@c4f1242' in a venv of its own) and
    rebuild from there, or check that the change cannot matter to the storage and say so here."""
    release = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{RELEASE}:pyproject.toml"], capture_output=True, text=True, check=True
    ).stdout
    assert dependencies(release) - dependencies((ROOT / "pyproject.toml").read_text()) == set()


def schema(dump: str) -> list[str]:
    """The dump without its rows: SQLite's INSERT lines, PostgreSQL's COPY blocks."""
    dump = re.sub(r"(?ms)^COPY .*? FROM stdin;\n.*?^\\\.\n", "", dump)
    return [line for line in dump.splitlines() if not line.startswith("INSERT INTO ")]


async def test_the_fixture_rebuilds_from_the_release_and_reads_back(postgres: Postgres, tmp_path: Path) -> None:
    rebuilt = rebuild(tmp_path / "rebuilt", postgres)
    committed = Fixture(HERE)
    assert json.loads(rebuilt.content.read_text()) == json.loads(committed.content.read_text())
    for engine in DUMPS:
        assert schema(rebuilt.dump(engine)) == schema(committed.dump(engine)), engine
        fresh = upgrade.load(rebuilt, engine, tmp_path / f"rebuilt-{engine}", postgres)
        kept = upgrade.load(committed, engine, tmp_path / f"committed-{engine}", postgres)
        assert await upgrade.row_counts(fresh) == await upgrade.row_counts(kept), engine
        await upgrade.migrated_and_read(fresh, rebuilt.content)
