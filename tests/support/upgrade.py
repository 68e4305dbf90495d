"""A release's database, loaded from its dump (tests/fixtures/upgrade), and read back through this tree's storage.

`load` puts a dump into a fresh database on either engine, as the release left it (schema and all, stamped with
the release's revision); `read_everything` then reads every row the release wrote through webhost's own storage
APIs, unsealed under the same secret, and compares each with what the release was told to write (content.json).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests.fixtures.upgrade.rebuild import SECRET, Fixture
from tests.support.postgres import USER, Postgres
from webhost.apps.origins import derive_key, secret_from_text
from webhost.auth.signin import IdTokenSeal
from webhost.storage.audit import AuditReader
from webhost.storage.chat_tables import chat_conversations
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import SignIn, Storage
from webhost.storage.history import CallHistory
from webhost.storage.inputs import InputVault
from webhost.storage.live_calls import LiveCallStore, RoundSeal
from webhost.storage.oauth_tokens import OAuthVault
from webhost.storage.roots import RootsStore


def load(fixture: Fixture, engine: str, folder: Path, postgres: Postgres | None) -> str:
    """A new database holding the fixture's dump for `engine`; its URL."""
    dump = fixture.dump(engine)
    if engine == "sqlite":
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "release.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.executescript(dump)
        return f"sqlite+aiosqlite:///{path}"
    assert postgres is not None
    url = postgres.new_database()
    psql(postgres, url, dump)
    return url


def psql(postgres: Postgres, url: str, script: str) -> None:
    """Run an SQL script (a plain pg_dump) on the database of `url`, stopping at the first error."""
    subprocess.run(
        [str(postgres.bin / "psql"), "-h", "127.0.0.1", "-p", str(postgres.port), "-U", USER]
        + ["-d", url.rsplit("/", 1)[1], "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"],
        input=script,
        env={**os.environ, "PGPASSWORD": postgres.password},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


async def row_counts(url: str) -> dict[str, int]:
    """Every table's number of rows (alembic_version left out: its one row is the revision)."""
    storage = Storage(url)
    try:
        async with storage.engine.connect() as db:
            names = await db.run_sync(lambda sync: sa.inspect(sync).get_table_names())
            return {
                name: int((await db.execute(sa.select(sa.func.count()).select_from(sa.table(name)))).scalar_one())
                for name in sorted(names)
                if name != "alembic_version"
            }
    finally:
        await storage.close()


async def snapshot(url: str) -> dict[str, Any]:
    """Every row of every table, in a stable order: what "nothing written" is checked against."""
    storage = Storage(url)
    try:
        async with storage.engine.connect() as db:
            names = await db.run_sync(lambda sync: sa.inspect(sync).get_table_names())
            return {
                name: sorted(map(repr, (await db.execute(sa.select(sa.text("*")).select_from(sa.table(name)))).all()))
                for name in names
            }
    finally:
        await storage.close()


async def revision(url: str) -> str:
    storage = Storage(url)
    try:
        async with storage.engine.connect() as db:
            return str((await db.execute(sa.text("SELECT version_num FROM alembic_version"))).scalar_one())
    finally:
        await storage.close()


async def read_everything(storage: Storage, content_file: Path) -> None:
    """Read back, through this tree's storage, every row the release wrote; assert each is what it was."""
    content: dict[str, Any] = json.loads(content_file.read_text())
    secret = secret_from_text(SECRET.read_text())
    now = content["now"]
    await _people_and_sessions(storage, content, secret, now)
    await _vaults(storage, content, secret)
    await _history_and_audit(storage, content)
    await _conversation(storage, content, secret)
    await _roots_and_live_calls(storage, content, secret)


async def _people_and_sessions(storage: Storage, content: dict[str, Any], secret: bytes, now: float) -> None:
    people = {person["id"]: person for person in content["people"]}
    seal = IdTokenSeal(derive_key(secret, "id-token/v1"))
    for expected in content["sessions"]:
        session = await storage.session(expected["id"], now)
        assert session is not None, expected
        person = people[expected["person"]]
        got = session.person
        assert (got.id, got.name, got.email, got.role, list(got.groups)) == (
            person["id"],
            person["name"],
            person["email"],
            person["role"],
            person["groups"],
        )
        assert session.expires_at == expected["expires_at"]
        assert seal.open(expected["id"], got.id, session.sealed_id_token) == expected["id_token"]
    assert await storage.session(content["revoked_session"]["id"], now) is None  # still revoked
    sign_in = dict(content["sign_in"])
    state = sign_in.pop("state")
    assert await storage.take_sign_in(state, now) == SignIn(**sign_in)


async def _vaults(storage: Storage, content: dict[str, Any], secret: bytes) -> None:
    inputs = InputVault(storage, derive_key(secret, "inputs/v1"))
    for person, values in content["inputs"].items():
        assert await inputs.values(person) == values
    oauth = OAuthVault(storage, derive_key(secret, "oauth/v1"))
    for grant in content["oauth"]:
        assert await oauth.get(grant["person"], grant["server"], grant["kind"]) == grant["value"]


async def _history_and_audit(storage: Storage, content: dict[str, Any]) -> None:
    history = CallHistory(storage)
    for expected in content["history"]:
        [summary] = await history.list(expected["person"])
        entry = await history.get(expected["person"], summary["id"])
        assert entry is not None
        assert (entry["server"], entry["name"], entry["status"], entry["result"]) == (
            expected["server"],
            expected["name"],
            expected["status"],
            expected["outcome"],
        )
    reader = AuditReader(storage)
    rows = await reader.entries(server=None, user=None, limit=100, before=None)
    assert [{k: v for k, v in row.items() if k != "id"} for row in reversed(rows)] == content["audit"]
    for grant in content["permissions"]:
        assert await reader.granted(grant["person"], grant["server"]) == {grant["permission"]}


async def _conversation(storage: Storage, content: dict[str, Any], secret: bytes) -> None:
    chat = content["conversation"]
    store = ConversationStore(storage, ChatSeal(derive_key(secret, "chat/v1")))
    person, conversation_id = chat["person"], chat["id"]
    conversation = await store.get(person, conversation_id)
    assert conversation is not None
    assert (conversation.title, conversation.model_id, conversation.settings) == (
        chat["title"],
        chat["model"],
        chat["settings"],
    )
    # The release wrote the title in the clear; HEAD's start seals it (migration 0014), and it reads the same.
    assert await store.seal_clear_titles() == 1
    sealed = await store.get(person, conversation_id)
    assert sealed is not None and sealed.title == chat["title"]
    async with storage.read() as db:
        assert (await db.execute(sa.select(chat_conversations.c.title))).scalars().all() == [""]
    messages = await store.messages(person, conversation_id)
    assert [message.body for message in messages] == chat["messages"]
    for request in chat["requests"]:
        [stored] = await store.requests(person, conversation_id, request["message"])
        assert (stored["step"], stored["body"]) == (request["step"], request["body"])
    assert await store.contexts(person, conversation_id) == [context["context"] for context in chat["contexts"]]
    usage = chat["usage"]
    [total] = await store.usage_totals("2000-01-01")
    assert (total["input"], total["output"]) == (usage["input_tokens"], usage["output_tokens"])


async def _roots_and_live_calls(storage: Storage, content: dict[str, Any], secret: bytes) -> None:
    roots = RootsStore(storage)
    for owner, items in content["roots"].items():
        assert await roots.get(owner) == items
    call = content["live_call"]
    calls = LiveCallStore(storage, RoundSeal(derive_key(secret, "live-calls/v1")))
    [live] = await calls.calls_of(call["replica"])
    assert (live.id, live.person_id, live.server, live.name, live.question, live.round) == (
        call["id"],
        call["person"],
        call["server"],
        call["name"],
        True,
        call["round"],
    )


async def migrated_and_read(url: str, content_file: Path) -> None:
    """HEAD's start (which migrates) on the release's database, then every row read back."""
    storage = Storage(url)
    try:
        await storage.start()
        await read_everything(storage, content_file)
    finally:
        await storage.close()
