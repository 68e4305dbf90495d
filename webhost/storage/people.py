"""Everyone webhost lets in is on record in `people` (id, name, email, role, groups, first and last seen),
whichever way they came in: oidc writes them when they sign in, and the gate tells `SeenPeople` about
every admitted request, so proxy mode's people and token mode's one person are there too.

Nobody waits for that record: `seen` only notes the person, and one writer task writes everyone noted
since its last write in one transaction (a team's first morning, fifty people at once, is one write, not
fifty racing for SQLite's lock while their pages wait). A request does not cost a write: a person is noted
on first sight in this process, at once when their name, email, role or groups change (a proxy's header
may say otherwise tomorrow), and else at most every `REFRESH_SECONDS` to move `last_seen`. While the
database cannot be written the noted people wait and are tried again (`RETRY_SECONDS`); they still get in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import anyio.abc
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.people import Person
from webhost.storage.db import Storage, save_person
from webhost.storage.transactions import DatabaseUnavailable

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 300.0
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
MAX_WAITING = 10_000  # people noted and not yet written; past it the newest are left for their next request


class SeenPeople:
    def __init__(
        self, storage: Storage, *, clock: Callable[[], float] = time.time, refresh: float = REFRESH_SECONDS
    ) -> None:
        self.storage = storage
        self._clock = clock
        self._refresh = refresh
        self._written: dict[str, tuple[Person, float]] = {}  # noted (written, or waiting to be)
        self._waiting: dict[str, tuple[Person, float]] = {}
        self._wake = anyio.Event()
        self.idle = anyio.Event()  # set whenever everyone noted is written (or the writer gave up on them)
        self.idle.set()
        self._stopping = False
        self._hurry = anyio.Event()  # stopping: try once more now
        self._stopped = anyio.Event()

    def seen(self, person: Person) -> None:
        """Note an admitted person; returns at once (the write is the writer task's)."""
        now = self._clock()
        known = self._written.get(person.id)
        if known is not None and known[0] == person and now - known[1] < self._refresh:
            return
        if person.id not in self._waiting and len(self._waiting) >= MAX_WAITING:
            return  # noted on their next request
        self._written[person.id] = (person, now)  # before the write: a burst of requests writes once
        self._waiting[person.id] = (person, now)
        if self.idle.is_set():
            self.idle = anyio.Event()
        self._wake.set()

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        task_group.start_soon(self.run, name="people-writer")

    async def run(self) -> None:
        """Write the people noted, all at once, until `stop`."""
        tries = 0
        try:
            while True:
                if not self._waiting:
                    self.idle.set()
                    if self._stopping:
                        return
                    self._wake = anyio.Event()
                    await self._wake.wait()
                    continue
                batch, self._waiting = self._waiting, {}
                try:
                    await self._write(batch)
                except (DatabaseUnavailable, sa.exc.SQLAlchemyError) as exc:
                    for person_id, noted in batch.items():  # a newer note of the same person wins
                        self._waiting.setdefault(person_id, noted)
                    if tries == 0:
                        logger.warning("could not record %d people in the people table: %s", len(batch), exc)
                    if self._stopping and tries > 0:
                        return
                    with anyio.move_on_after(
                        0 if self._stopping else RETRY_SECONDS[min(tries, len(RETRY_SECONDS) - 1)]
                    ):
                        await self._hurry.wait()
                    tries += 1
                    continue
                tries = 0
        finally:
            self.idle.set()
            self._stopped.set()

    async def stop(self, timeout: float = 2.0) -> None:
        """Write who is still waiting (within `timeout`), then stop."""
        self._stopping = True
        self._hurry.set()
        self._wake.set()
        with anyio.move_on_after(timeout):
            await self._stopped.wait()

    async def _write(self, batch: dict[str, tuple[Person, float]]) -> None:
        async def work(db: AsyncConnection) -> None:
            for person, now in batch.values():
                await save_person(db, person, now)

        try:
            await self.storage.write(work)
        except sa.exc.IntegrityError:  # another process inserted one of them first: now it is an update
            await self.storage.write(work)
