"""Search, export, the list's order and titles of the chat (contract §8.1), and migration 0010 on both engines.

Search and the store run against the real database on both engines; the methods in-process through webhost's
page WebSocket with the scripted model endpoint over a real socket.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config as AlembicConfig

from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from webhost.chat.search import ConversationSearch
from webhost.chat.titles import first_line_title
from webhost.people import Person
from webhost.storage.chat_tables import chat_conversations, chat_messages
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import MIGRATIONS, Storage

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def options(endpoint: ModelEndpointServer, model: str) -> dict[str, Any]:
    entry = {"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    return {"chat": {"models": [entry]}}


async def converse(tab: AsgiWsClient, text: str) -> str:
    sent = await tab.request("chat/send", {"text": text})
    await tab.wait_notification(
        "chat/event",
        lambda p: (
            p.get("type") == "message" and p["message"]["id"] == sent["answerId"] and p["message"]["status"] == "done"
        ),
    )
    return str(sent["conversationId"])


def message(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "text": text, "status": "done"}


async def test_search_finds_the_persons_own_conversations_only_and_follows_every_write(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(b"k" * 32))
        await store.create("ada", "c-1", "Trip", "m", 1.0)
        await store.save_message(
            "ada", "c-1", message("m-1", "Crimson apples for the trip"), seq=1, replica_id=None, now=2.0
        )
        await store.create("bob", "c-2", "Apples too", "m", 1.0)
        await store.save_message("bob", "c-2", message("m-2", "crimson apples of bob"), seq=1, replica_id=None, now=2.0)
        ada = ConversationSearch(lambda: store, "ada")
        [found] = await ada.search("apples CRIMSON")
        assert found["id"] == "c-1" and found["title"] == "Trip" and "Crimson apples" in found["snippet"]
        assert await ada.search("bob") == [] and await ada.search("   ") == []
        # Written elsewhere (another replica: straight into the database): the next search has it.
        await store.save_message("ada", "c-1", message("m-3", "and pears"), seq=2, replica_id=None, now=3.0)
        await store.update("ada", "c-1", title="Orchard")  # a rename, without activity
        [found] = await ada.search("pears")
        assert found["title"] == "Orchard" and found["updatedAt"] == 3.0
        await store.delete("ada", "c-1")
        assert await ada.search("apples") == []
        assert len(ada) == 0
        await store.create("ada", "c-3", "Again", "m", 4.0)
        assert await ada.search("again") != [] and len(ada) == 1
        ada.forget()  # the workspace closed: nothing of it stays in memory
        assert len(ada) == 0
    finally:
        await storage.close()


async def test_search_and_export_through_the_page_and_a_rename_keeps_the_order(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("history", [{"events": [{"text": "Noted: `x` | y"}]}])
    webhost = options(endpoint, "history")
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, webhost_options=webhost, people=True) as host:
        ada = Person(id="ada", name="Ada", role="member")
        admin = Person(id="root", name="Root", role="admin")
        async with host.tab(person=ada) as tab, host.tab(person=admin) as other:
            older = await converse(tab, "## Secret *plans*\n\nfor the garden")
            newer = await converse(tab, "another one")
            listed = (await tab.request("chat/list"))["conversations"]
            assert [c["id"] for c in listed] == [newer, older] and listed[1]["title"] == "Secret plans"
            await tab.request("chat/rename", {"conversationId": older, "title": "Garden"})
            renamed = (await tab.request("chat/list"))["conversations"]
            assert [c["id"] for c in renamed] == [newer, older] and renamed[1]["updatedAt"] == listed[1]["updatedAt"]

            found = await tab.request("chat/search", {"query": "garden"})
            assert [r["id"] for r in found["results"]] == [older]
            assert (await other.request("chat/search", {"query": "garden"}))["results"] == []  # an admin included

            markdown = await tab.request("chat/export", {"conversationId": older, "format": "md"})
            assert markdown["filename"] == "Garden.md" and markdown["mediaType"] == "text/markdown"
            assert markdown["text"] == (
                "# Garden\n\n## You\n\n## Secret *plans*\n\nfor the garden\n\n## Assistant (m)\n\nNoted: `x` | y\n"
            )
            exported = await tab.request("chat/export", {"conversationId": older, "format": "json"})
            document = json.loads(exported["text"])
            assert exported["filename"] == "Garden.json" and document["conversation"]["title"] == "Garden"
            assert [m["role"] for m in document["messages"]] == ["user", "assistant"]
            for refused in ({"conversationId": older, "format": "pdf"}, {"conversationId": "c-nope", "format": "md"}):
                with pytest.raises(Exception, match="format|no such conversation"):
                    await tab.request("chat/export", refused)
            with pytest.raises(Exception, match="no such conversation"):
                await other.request("chat/export", {"conversationId": older, "format": "md"})


def test_a_title_is_the_first_line_cleaned() -> None:
    assert first_line_title("\n\n# Plan **the** trip\nmore") == "Plan the trip"
    assert first_line_title("> - `quoted`   item") == "quoted item"
    assert first_line_title("1. Do   this") == "Do this"
    long = "word " * 30
    assert first_line_title(long) == ("word " * 12).strip() + "…"
    assert first_line_title("```\n") == "New conversation"


async def test_migration_0010_makes_the_stored_messages_one_branch(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:

        def at(connection: sa.Connection, revision: str) -> None:
            config = AlembicConfig()
            config.set_main_option("script_location", str(MIGRATIONS))
            config.attributes["connection"] = connection
            if revision == "head":
                command.upgrade(config, revision)
            else:
                command.downgrade(config, revision)

        async with storage.engine.begin() as db:
            await db.run_sync(at, "0009")
            for seq, (conversation, message_id) in enumerate([("a", "a1"), ("b", "b1"), ("a", "a2"), ("a", "a3")]):
                await db.execute(
                    sa.text(
                        "INSERT INTO chat_messages (id, conversation_id, person_id, seq, role, status, created_at,"
                        " updated_at, sealed) VALUES (:id, :c, 'p', :seq, 'user', 'done', 1, 1, :sealed)"
                    ),
                    {"id": message_id, "c": conversation, "seq": seq, "sealed": b"x"},
                )
        async with storage.engine.begin() as db:
            await db.run_sync(at, "head")
            rows = (await db.execute(sa.select(chat_messages.c.id, chat_messages.c.parent_id))).all()
            assert dict(rows) == {"a1": None, "a2": "a1", "a3": "a2", "b1": None}
            assert "leaf_id" in chat_conversations.c
    finally:
        await storage.close()
