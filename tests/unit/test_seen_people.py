"""Everyone let in is on record in `people`, without a write per request, and without anyone waiting for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy as sa

from webhost.people import TOKEN_PERSON, Person
from webhost.storage.db import Storage, people
from webhost.storage.people import REFRESH_SECONDS, SeenPeople
from webhost.storage.urls import database_url

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    storage = Storage(database_url(None, tmp_path))
    await storage.start()
    yield storage
    await storage.close()


@asynccontextmanager
async def writing(seen: SeenPeople) -> AsyncIterator[SeenPeople]:
    """The people's writer task running for as long as the block lasts."""
    async with anyio.create_task_group() as tg:
        seen.start(tg)
        yield seen
        await seen.stop()


async def noted(seen: SeenPeople, person: Person) -> None:
    """Tell it about a person, and wait until its writer has done what that asked for."""
    seen.seen(person)
    await seen.idle.wait()


async def rows(storage: Storage) -> dict[str, dict[str, Any]]:
    async with storage.engine.connect() as db:
        return {row["id"]: dict(row) for row in (await db.execute(sa.select(people))).mappings()}


async def test_a_person_is_written_on_first_sight_then_only_when_they_change_or_a_while_passed(
    storage: Storage,
) -> None:
    clock = Clock()
    async with writing(SeenPeople(storage, clock=clock)) as seen:
        await check_writes(storage, seen, clock)


async def check_writes(storage: Storage, seen: SeenPeople, clock: Clock) -> None:
    bob = Person(id="bob@example.com", name="bob@example.com", email="bob@example.com", groups=("dev",))
    await noted(seen, bob)
    first = (await rows(storage))["bob@example.com"]
    assert first == {
        "id": "bob@example.com",
        "name": "bob@example.com",
        "email": "bob@example.com",
        "role": "member",
        "groups": ["dev"],
        "first_seen": clock.now,
        "last_seen": clock.now,
    }
    clock.now += 10
    writes = storage.transactions.writes
    seen.seen(bob)  # the same person a moment later: nothing to write
    assert seen.idle.is_set() and storage.transactions.writes == writes
    assert (await rows(storage))["bob@example.com"]["last_seen"] == first["last_seen"]
    clock.now += 10
    promoted = Person(id=bob.id, name=bob.name, email=bob.email, role="admin", groups=("dev", "ops"))
    await noted(seen, promoted)  # what the proxy says about them changed: written at once
    changed = (await rows(storage))["bob@example.com"]
    assert (changed["role"], changed["groups"], changed["last_seen"]) == ("admin", ["dev", "ops"], clock.now)
    assert changed["first_seen"] == first["first_seen"]
    clock.now += REFRESH_SECONDS
    await noted(seen, promoted)  # unchanged but a while later: last_seen moves
    assert (await rows(storage))["bob@example.com"]["last_seen"] == clock.now


async def test_token_mode_and_a_second_process_are_recorded_too(storage: Storage) -> None:
    clock = Clock()
    async with writing(SeenPeople(storage, clock=clock)) as seen:
        await noted(seen, TOKEN_PERSON)
    clock.now += 5
    async with writing(SeenPeople(storage, clock=clock)) as seen:  # another process (or a restart): an update
        await noted(seen, TOKEN_PERSON)
    token = (await rows(storage))[TOKEN_PERSON.id]
    assert (token["name"], token["role"], token["last_seen"] - token["first_seen"]) == ("webhost", "admin", 5)


async def test_a_database_that_cannot_be_written_does_not_keep_anyone_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = Storage(database_url(None, tmp_path))  # never started: no tables
    async with writing(SeenPeople(storage)) as seen:
        seen.seen(TOKEN_PERSON)  # returns at once; the write fails, is logged, and waits to be tried again
        with anyio.fail_after(30):
            while "could not record 1 people" not in caplog.text:
                await anyio.sleep(0.01)
        assert not seen.idle.is_set()
        await storage.start()
        with anyio.fail_after(30):
            await seen.idle.wait()  # tried again by itself, without another request
        assert TOKEN_PERSON.id in await rows(storage)
    await storage.close()


async def test_fifty_newcomers_at_once_are_one_write(storage: Storage) -> None:
    """A team's first morning: each person's first request noted them, and nobody waited on SQLite's lock."""
    newcomers = [Person(id=f"p{n}@example.com", name=f"P{n}") for n in range(50)]
    async with writing(SeenPeople(storage)) as seen:
        writes = storage.transactions.writes
        for person in newcomers:
            seen.seen(person)
        await seen.idle.wait()
        assert storage.transactions.writes - writes == 1
    assert {p.id for p in newcomers} <= set(await rows(storage))
