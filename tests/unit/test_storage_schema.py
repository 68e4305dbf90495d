"""The migrations build exactly the tables the queries use (`metadata`), and the audit ones come down again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config as AlembicConfig
from alembic.migration import MigrationContext

from webhost.storage import audit as audit_store  # its tables join the shared metadata
from webhost.storage.db import MIGRATIONS, Storage, metadata
from webhost.storage.urls import database_url

pytestmark = pytest.mark.anyio


def differences(connection: sa.Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


def tables(connection: sa.Connection) -> set[str]:
    return set(sa.inspect(connection).get_table_names())


def downgrade_to(connection: sa.Connection, revision: str) -> None:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.downgrade(config, revision)


async def test_the_migrated_schema_is_the_metadata_and_0003_comes_down(tmp_path: Path) -> None:
    storage = Storage(database_url(None, tmp_path))
    await storage.start()
    try:
        async with storage.engine.begin() as db:
            assert await db.run_sync(differences) == []
            assert {audit_store.audit.name, audit_store.granted_permissions.name, "people"} <= await db.run_sync(tables)
            await db.run_sync(downgrade_to, "0002")
            assert not {"audit", "granted_permissions"} & await db.run_sync(tables)
    finally:
        await storage.close()
