"""Everyone let in is on record in `people`, without a write per request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

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


async def rows(storage: Storage) -> dict[str, dict[str, Any]]:
    async with storage.engine.connect() as db:
        return {row["id"]: dict(row) for row in (await db.execute(sa.select(people))).mappings()}


async def test_a_person_is_written_on_first_sight_then_only_when_they_change_or_a_while_passed(
    storage: Storage,
) -> None:
    clock = Clock()
    seen = SeenPeople(storage, clock=clock)
    bob = Person(id="bob@example.com", name="bob@example.com", email="bob@example.com", groups=("dev",))
    await seen.seen(bob)
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
    await seen.seen(bob)  # the same person a moment later: no write
    assert (await rows(storage))["bob@example.com"]["last_seen"] == first["last_seen"]
    clock.now += 10
    promoted = Person(id=bob.id, name=bob.name, email=bob.email, role="admin", groups=("dev", "ops"))
    await seen.seen(promoted)  # what the proxy says about them changed: written at once
    changed = (await rows(storage))["bob@example.com"]
    assert (changed["role"], changed["groups"], changed["last_seen"]) == ("admin", ["dev", "ops"], clock.now)
    assert changed["first_seen"] == first["first_seen"]
    clock.now += REFRESH_SECONDS
    await seen.seen(promoted)  # unchanged but a while later: last_seen moves
    assert (await rows(storage))["bob@example.com"]["last_seen"] == clock.now


async def test_token_mode_and_a_second_process_are_recorded_too(storage: Storage) -> None:
    clock = Clock()
    await SeenPeople(storage, clock=clock).seen(TOKEN_PERSON)
    clock.now += 5
    await SeenPeople(storage, clock=clock).seen(TOKEN_PERSON)  # another process (or a restart): an update
    token = (await rows(storage))[TOKEN_PERSON.id]
    assert (token["name"], token["role"], token["last_seen"] - token["first_seen"]) == ("webhost", "admin", 5)


async def test_a_database_that_cannot_be_written_does_not_keep_anyone_out(tmp_path: Path) -> None:
    storage = Storage(database_url(None, tmp_path))  # never started: no tables
    seen = SeenPeople(storage)
    await seen.seen(TOKEN_PERSON)  # logged, not raised
    await storage.start()
    await seen.seen(TOKEN_PERSON)  # tried again on the next request
    assert TOKEN_PERSON.id in await rows(storage)
    await storage.close()
