"""Everyone webhost lets in is on record in `people` (id, name, email, role, groups, first and last seen),
whichever way they came in: oidc writes them when they sign in, and the gate tells `SeenPeople` about
every admitted request, so proxy mode's people and token mode's one person are there too.

A request does not cost a write: a person is written on first sight in this process, at once when
their name, email, role or groups change (a proxy's header may say otherwise tomorrow), and else at
most every `REFRESH_SECONDS` to move `last_seen`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import sqlalchemy as sa

from webhost.people import Person
from webhost.storage.db import Storage

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 300.0


class SeenPeople:
    def __init__(
        self, storage: Storage, *, clock: Callable[[], float] = time.time, refresh: float = REFRESH_SECONDS
    ) -> None:
        self.storage = storage
        self._clock = clock
        self._refresh = refresh
        self._written: dict[str, tuple[Person, float]] = {}

    async def seen(self, person: Person) -> None:
        now = self._clock()
        known = self._written.get(person.id)
        if known is not None and known[0] == person and now - known[1] < self._refresh:
            return
        self._written[person.id] = (person, now)  # before the write: a burst of requests writes once
        try:
            try:
                await self.storage.save_person(person, now)
            except sa.exc.IntegrityError:  # another process inserted them first: now it is an update
                await self.storage.save_person(person, now)
        except (sa.exc.SQLAlchemyError, OSError) as exc:  # the person still gets in; the next request retries
            self._written.pop(person.id, None)
            logger.warning("could not record %s in the people table: %s", person.id, exc)
