"""Migration 0015 moves each attachment's sealed content out of its row (webhost/storage/attachments.py): what was
kept before reads back after it, on both engines, and coming down again puts it back."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config as AlembicConfig

from webhost.storage.attachments import SEAL_KIND, chat_attachment_content, chat_attachments
from webhost.storage.chat_seal import BytesSeal
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import MIGRATIONS, Storage

pytestmark = pytest.mark.anyio

KEY = b"k" * 32


def downgrade_to(connection: sa.Connection, revision: str) -> None:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.downgrade(config, revision)


async def test_content_kept_before_reads_back_after_and_comes_back_down(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start(to="0014")
    try:
        sealed = BytesSeal(ChatSeal(KEY)).seal("ada", "a-1", SEAL_KIND, b"the garden plans")
        row = {"id": "a-1", "person_id": "ada", "conversation_id": "c-1", "kind": "text", "mime_type": "text/plain"}
        async with storage.engine.begin() as db:  # as the previous version kept it: the content in the row
            await db.execute(chat_attachments.insert().values(**row, size=16, created_at=1.0, sealed=sealed))

        await storage.start()  # this version's start: migrated to head
        store = ConversationStore(storage, ChatSeal(KEY))
        assert await store.attachments.content("ada", "a-1") == b"the garden plans"
        async with storage.read() as db:
            assert (await db.execute(sa.select(chat_attachments.c.sealed))).scalars().all() == [None]
            assert len((await db.execute(sa.select(chat_attachment_content.c.id))).all()) == 1

        async with storage.engine.begin() as db:
            await db.run_sync(downgrade_to, "0014")
            [back] = (await db.execute(sa.text("SELECT sealed FROM chat_attachments"))).scalars().all()
        assert bytes(back) == sealed
    finally:
        await storage.close()
