"""A conversation's title is sealed at rest like its messages (storage/conversation_titles.py): the database holds
no title in the clear, a previous version's clear titles are sealed when webhost starts, and the model's title
still never replaces the person's rename, on both engines."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from webhost.storage.chat_tables import chat_conversations
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage

pytestmark = pytest.mark.anyio

SECRET_TITLE = "Divorce lawyer in Lyon"


async def raw_rows(storage: Storage) -> list[tuple[str, str, bytes | None]]:
    """What the database holds of each conversation's title: (id, the clear column, the sealed one)."""
    columns = chat_conversations.c
    async with storage.read() as db:
        rows = (await db.execute(sa.select(columns.id, columns.title, columns.sealed_title))).all()
    return [(row.id, row.title, None if row.sealed_title is None else bytes(row.sealed_title)) for row in rows]


async def test_the_title_is_sealed_and_reads_back_only_for_its_person(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(b"k" * 32))
        await store.create("ada", "c-1", SECRET_TITLE, "m", 1.0)
        [(_, clear, sealed)] = await raw_rows(storage)
        assert clear == "" and sealed is not None and b"Lyon" not in sealed
        conversation = await store.get("ada", "c-1")
        assert conversation is not None and conversation.title == SECRET_TITLE
        assert (await store.listing("ada"))[0].title == SECRET_TITLE
        assert await store.activity("ada") == {"c-1": (SECRET_TITLE, 1.0)}
        assert await store.get("bob", "c-1") is None

        await store.update("ada", "c-1", title="Renamed")
        [(_, clear, sealed)] = await raw_rows(storage)
        assert clear == "" and sealed is not None and b"Renamed" not in sealed
        assert (await store.activity("ada"))["c-1"][0] == "Renamed"

        # Under another deployment secret the title does not open (nor does a sealed value moved to another row).
        other = ConversationStore(storage, ChatSeal(b"o" * 32))
        assert (await other.activity("ada"))["c-1"][0] == ""
    finally:
        await storage.close()


async def test_the_models_title_never_replaces_a_rename(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(b"k" * 32))
        await store.create("ada", "c-1", "first line", "m", 1.0)
        # The model's title, while the title is still the one it started from: written.
        assert await store.update("ada", "c-1", title="Model's title", title_was="first line")
        assert (await store.activity("ada"))["c-1"][0] == "Model's title"
        # The person renamed it meanwhile: the model's title is not written.
        await store.update("ada", "c-1", title="Mine")
        assert not await store.update("ada", "c-1", title="Late model title", title_was="Model's title")
        assert (await store.activity("ada"))["c-1"][0] == "Mine"
        assert not await store.update("bob", "c-1", title="x", title_was="Mine")  # someone else's: nothing
    finally:
        await storage.close()


async def test_a_previous_versions_clear_titles_read_back_and_are_sealed_at_start(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(b"k" * 32))
        await store.create("ada", "c-new", "Already sealed", "m", 1.0)
        # What the previous version wrote (or one of its replicas during a rolling upgrade): the clear column, and
        # over a sealed title, a rename in the clear (the newest).
        rows = [("c-old", "ada", SECRET_TITLE), ("c-bob", "bob", "Bob's plans")]
        async with storage.engine.begin() as db:
            for conversation_id, person, title in rows:
                values = {"id": conversation_id, "person_id": person, "title": title, "model_id": "m"}
                await db.execute(chat_conversations.insert().values(**values, created_at=2.0, updated_at=2.0))
            await db.execute(
                chat_conversations.update().where(chat_conversations.c.id == "c-new").values(title="Renamed by 0.3")
            )
        assert (await store.activity("ada")) == {"c-new": ("Renamed by 0.3", 1.0), "c-old": (SECRET_TITLE, 2.0)}

        assert await store.seal_clear_titles() == 3
        assert all(clear == "" and sealed is not None for _, clear, sealed in await raw_rows(storage))
        assert (await store.activity("ada")) == {"c-new": ("Renamed by 0.3", 1.0), "c-old": (SECRET_TITLE, 2.0)}
        assert (await store.activity("bob")) == {"c-bob": ("Bob's plans", 2.0)}
        assert await store.seal_clear_titles() == 0  # the second replica to start finds nothing left
    finally:
        await storage.close()
