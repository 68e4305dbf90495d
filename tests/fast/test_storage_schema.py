"""The migrations build exactly the tables the queries use (`metadata`) on both engines, and each
revision comes down again (one by one, to nothing) and back up."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config as AlembicConfig
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

# Every store's tables join the shared metadata on import.
from webhost.storage import (
    attachments,
    audit,
    budgets,
    chat_tables,
    history,
    live_calls,
    oauth_tokens,
    roots,
    turn_leases,
)
from webhost.storage.db import MIGRATIONS, Storage, metadata

pytestmark = pytest.mark.anyio

STORES = {
    "0003": {audit.audit.name, audit.granted_permissions.name},
    "0004": {oauth_tokens.oauth_grants.name},
    "0005": {live_calls.replicas.name, live_calls.live_calls.name},
    "0006": {history.call_history.name},
    "0007": {
        chat_tables.chat_conversations.name,
        chat_tables.chat_messages.name,
        chat_tables.chat_requests.name,
        chat_tables.chat_contexts.name,
        chat_tables.chat_usage.name,
    },
    "0009": {roots.roots.name},
    "0012": {budgets.chat_budget_days.name, budgets.chat_budget_holds.name, turn_leases.chat_turn_leases.name},
    "0015": {attachments.chat_attachment_content.name},
}
# Revisions that add a column rather than a table: (table, column).
COLUMNS = {
    "0008": ("web_sessions", "sealed_id_token"),
    "0010": ("chat_messages", "parent_id"),
    "0014": ("chat_conversations", "sealed_title"),
}


def differences(connection: sa.Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True, "compare_server_default": True})
    return list(compare_metadata(context, metadata))


def tables(connection: sa.Connection) -> set[str]:
    return set(sa.inspect(connection).get_table_names())


def columns(connection: sa.Connection, table: str) -> set[str]:
    return {column["name"] for column in sa.inspect(connection).get_columns(table)}


def config(connection: sa.Connection | None) -> AlembicConfig:
    result = AlembicConfig()
    result.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        result.attributes["connection"] = connection
    return result


def downgrade_to(connection: sa.Connection, revision: str) -> None:
    command.downgrade(config(connection), revision)


def revisions() -> list[str]:
    """The chain from the first revision to head."""
    script = ScriptDirectory.from_config(config(None))
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


async def test_the_migrated_schema_is_the_metadata_and_every_revision_comes_down(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        async with storage.engine.begin() as db:
            assert await db.run_sync(differences) == []
            assert set().union(*STORES.values()) | {"people"} <= await db.run_sync(tables)
        chain = revisions()
        for revision, below in reversed(list(zip(chain[1:], chain, strict=False))):
            async with storage.engine.begin() as db:
                await db.run_sync(downgrade_to, below)
                left = await db.run_sync(tables)
            assert not STORES.get(revision, set()) & left, f"{revision} left {left}"
            if revision in COLUMNS:
                table, added = COLUMNS[revision]
                async with storage.engine.connect() as db:
                    names = await db.run_sync(columns, table)
                assert added not in names, f"{revision} left {table}.{added}"
        async with storage.engine.begin() as db:
            await db.run_sync(downgrade_to, "base")
            assert await db.run_sync(tables) == {"alembic_version"}
        await storage.start()
        async with storage.engine.begin() as db:
            assert await db.run_sync(differences) == []
    finally:
        await storage.close()
