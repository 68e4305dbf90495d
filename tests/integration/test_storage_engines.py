"""The storage layer on both engines (SQLite and a real PostgreSQL, `database_url` in tests/conftest.py):
migrations from empty, down and up again, applied by several processes at once; every query of
`Storage` with the types that differ between engines (float timestamps, JSON, upserts); and a
database that cannot be reached or refuses the password is one line without the password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory

from tests.support.inprocess import in_process_host, sdk_server
from tests.support.postgres import Postgres
from tests.support.process import ROOT, free_port
from webhost.people import Person
from webhost.storage.db import MIGRATIONS, SignIn, Storage, StorageUnavailable, alembic_config, people
from webhost.storage.portable import upsert

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada", email="ada@example.com", role="admin", groups=("ops", "webhost-admins"))
# A timestamp with microseconds: a Float column must bring it back exactly on both engines.
NOW = 1_790_000_000.123456


def head() -> str:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    revision = ScriptDirectory.from_config(config).get_current_head()
    assert revision is not None
    return revision


async def tables_and_version(storage: Storage) -> tuple[set[str], list[str]]:
    async with storage.engine.connect() as db:
        names = await db.run_sync(lambda sync: set(sa.inspect(sync).get_table_names()))
        versions = [row[0] for row in await db.execute(sa.text("SELECT version_num FROM alembic_version"))]
    return names, versions


async def test_migrations_run_from_empty_then_down_to_nothing_and_up_again(database_url: str) -> None:
    storage = Storage(database_url)
    try:
        await storage.start()
        names, versions = await tables_and_version(storage)
        assert {"people", "web_sessions", "sign_ins", "person_inputs", "alembic_version"} <= names
        assert versions == [head()]
        await storage.start()  # a second start (every replica's, every restart) finds it at head
        assert (await tables_and_version(storage))[1] == [head()]

        async with storage.engine.begin() as db:
            await db.run_sync(lambda sync: command.downgrade(alembic_config(sync), "base"))
        names, versions = await tables_and_version(storage)
        assert names == {"alembic_version"} and versions == []

        await storage.start()
        assert (await tables_and_version(storage))[1] == [head()]
    finally:
        await storage.close()


# Every process starts migrating at the same moment: once all of them are ready (a file each in a shared folder),
# however long each took to start.
MIGRATE = """
import asyncio, os, sys
from pathlib import Path
from webhost.storage.db import Storage
async def main():
    storage = Storage(sys.argv[1])
    ready, count = Path(sys.argv[2]), int(sys.argv[3])
    (ready / str(os.getpid())).touch()
    while len(list(ready.iterdir())) < count:
        await asyncio.sleep(0.005)
    await storage.start()
    await storage.close()
asyncio.run(main())
"""


async def test_migrations_applied_concurrently_by_several_processes_run_once(database_url: str, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    ready.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE, database_url, str(ready), "3"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(3)
    ]
    outputs = [proc.communicate(timeout=120)[0].decode(errors="replace") for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], outputs
    storage = Storage(database_url)
    try:
        names, versions = await tables_and_version(storage)
        assert versions == [head()] and "person_inputs" in names
        await storage.save_person(ADA, NOW)  # the schema is whole
    finally:
        await storage.close()


async def test_people_sessions_and_sign_ins_behave_the_same_on_both_engines(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        await storage.create_session("cookie-1", ADA, now=NOW, expires_at=NOW + 3600, sealed_id_token=b"\x01sealed")
        found = await storage.session("cookie-1", NOW + 1)
        assert found is not None and found.person == ADA and found.sealed_id_token == b"\x01sealed"
        assert found.expires_at == NOW + 3600  # float timestamps come back exact
        assert await storage.session("cookie-1", NOW + 3601) is None  # expired
        assert await storage.session("cookie-2", NOW) is None

        renamed = Person(id="ada", name="Ada L.", email=None, role="member", groups=())
        await storage.save_person(renamed, NOW + 10)  # an upsert: first_seen stays, the rest follows
        async with storage.engine.connect() as db:
            row = (await db.execute(sa.select(people).where(people.c.id == "ada"))).mappings().one()
        assert (row["name"], row["email"], row["role"], row["groups"]) == ("Ada L.", None, "member", [])
        assert (row["first_seen"], row["last_seen"]) == (NOW, NOW + 10)

        await storage.revoke_session("cookie-1", NOW + 2)
        assert await storage.session("cookie-1", NOW + 3) is None

        sign_in = SignIn(
            nonce="n", code_verifier="v" * 43, redirect_uri="https://x/auth/callback", next_path="/", created_at=NOW
        )
        await storage.start_sign_in("state-1", sign_in)
        assert await storage.take_sign_in("state-1", NOW + 1) == sign_in
        assert await storage.take_sign_in("state-1", NOW + 2) == "reused"
        assert await storage.take_sign_in("state-x", NOW + 2) == "unknown"
    finally:
        await storage.close()


async def test_the_shared_upsert_inserts_then_updates_and_can_keep_columns(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        row = {
            "id": "bob",
            "name": "Bob",
            "email": None,
            "role": "member",
            "groups": ["a"],
            "first_seen": 1.5,
            "last_seen": 1.5,
        }
        async with storage.engine.begin() as db:
            await upsert(db, people, row, key=["id"], keep=["first_seen"])
            await upsert(
                db,
                people,
                {**row, "name": "Robert", "first_seen": 9.0, "last_seen": 9.0},
                key=["id"],
                keep=["first_seen"],
            )
            await upsert(db, people, {**row, "name": "Ignored"}, key=["id"], keep=list(row))  # keep all: left alone
        async with storage.engine.connect() as db:
            rows = (await db.execute(sa.select(people.c.name, people.c.first_seen, people.c.last_seen))).all()
        assert [tuple(r) for r in rows] == [("Robert", 1.5, 9.0)]
    finally:
        await storage.close()


async def test_a_wrong_password_is_one_line_without_the_password(postgres: Postgres) -> None:
    url = postgres.new_database().replace(postgres.password, "not-the-password-4711")
    storage = Storage(url)
    with pytest.raises(StorageUnavailable) as caught:
        await storage.start()
    message = str(caught.value)
    assert "not-the-password-4711" not in message and "\n" not in message
    assert message.startswith(f"database postgresql+asyncpg://webhost:***@127.0.0.1:{postgres.port}/")
    assert "password authentication failed" in message


async def test_a_database_nobody_listens_on_is_one_line() -> None:
    port = free_port()
    storage = Storage(f"postgres://webhost:s3cret-pw-0042@127.0.0.1:{port}/webhost")
    with pytest.raises(StorageUnavailable) as caught:
        await storage.start()
    message = str(caught.value)
    assert message.startswith(f"database postgresql+asyncpg://webhost:***@127.0.0.1:{port}/webhost: "), message
    assert "s3cret-pw-0042" not in message and "\n" not in message and "refused" in message.lower(), message


async def test_replicas_starting_together_in_one_loop_migrate_once(database_url: str) -> None:
    """The same race without process start-up jitter: four engines start in the same instant."""
    replicas = [Storage(database_url) for _ in range(4)]
    try:
        async with anyio.create_task_group() as group:
            for replica in replicas:
                group.start_soon(replica.start)
        assert (await tables_and_version(replicas[0]))[1] == [head()]
    finally:
        for replica in replicas:
            await replica.close()


async def test_the_database_password_never_reaches_the_browser(tmp_path: Path, postgres: Postgres) -> None:
    """webhost never sends the password of WEBHOST_DATABASE_URL to a tab; and a server that echoes a guess of it
    gets the guess back as it sent it, so nothing the page shows confirms the guess (issue 24 item 1: before,
    the echo came back as `pw=***`, which told the server its guess was the password)."""
    async with (
        in_process_host(tmp_path, {"basic": sdk_server("basic")}, database_url=postgres.new_database()) as host,
        host.tab() as tab,
    ):
        await tab.wait_connected("basic")
        await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": "c0"}
        )
        await tab.request("servers/list")
        assert postgres.password not in "\n".join(tab.received)
        echoed = await tab.request(
            "tools/call",
            {"server": "basic", "name": "echo", "arguments": {"text": f"pw={postgres.password}"}, "callId": "c1"},
        )
        assert echoed["content"][0]["text"] == f"pw={postgres.password}"


async def test_a_host_that_does_not_resolve_is_one_line() -> None:
    storage = Storage("postgresql://webhost:s3cret-pw-0043@no-such-host.invalid/webhost")
    with pytest.raises(StorageUnavailable) as caught:
        await storage.start()
    message = str(caught.value)
    assert message.startswith(
        "database postgresql+asyncpg://webhost:***@no-such-host.invalid/webhost: cannot find the host ("
    )
    assert "s3cret-pw-0043" not in message and "\n" not in message
