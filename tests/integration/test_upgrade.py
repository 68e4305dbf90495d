"""Upgrades keep everything: the previous release's database (tests/fixtures/upgrade, made by running c4f1242's
code) migrated by this tree on SQLite and on a real PostgreSQL, then every row read back through webhost's own
storage, unsealed under the same secret; nothing lost on the way."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory

from tests.fixtures.upgrade.rebuild import HERE, Fixture
from tests.support import upgrade
from tests.support.postgres import Postgres
from webhost.storage.db import MIGRATIONS

pytestmark = pytest.mark.anyio

ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("engine", ENGINES)
async def test_the_previous_release_database_is_migrated_and_every_row_reads_back(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    postgres: Postgres | None = request.getfixturevalue("postgres") if engine == "postgresql" else None
    url = upgrade.load(Fixture(HERE), engine, tmp_path, postgres)
    before = await upgrade.row_counts(url)
    assert await upgrade.revision(url) == "0009"  # c4f1242's head

    await upgrade.migrated_and_read(url, Fixture(HERE).content)

    assert await upgrade.revision(url) == head_revision()
    after = await upgrade.row_counts(url)
    # Every row of every table the release had is still there (what the reads above used up, the pending
    # sign-in, is used, not deleted).
    assert {table: after[table] for table in before} == before


def head_revision() -> str:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head
