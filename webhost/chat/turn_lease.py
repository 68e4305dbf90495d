"""A conversation's turn, owned in the store (webhost/storage/turn_leases.py): a replica takes the lease before
it starts a turn, renews it while the turn runs, and gives it back when the turn ends. Another replica refuses
to start a turn there meanwhile, and does not declare the answer being written there interrupted."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from webhost.errors import InvalidParams
from webhost.storage.db import Storage
from webhost.storage.turn_leases import TurnLeaseStore

logger = logging.getLogger(__name__)

ELSEWHERE = "the model is answering in this conversation on another replica (another tab): wait for it or stop it there"


class TurnLeases:
    def __init__(self, storage: Storage, person_id: str, replica_id: str, lease: float) -> None:
        self.store = TurnLeaseStore(storage)
        self.person_id = person_id
        self.replica_id = replica_id
        self.lease = lease

    async def elsewhere(self, conversation_id: str) -> bool:
        """Another replica runs a turn in this conversation now (its lease is live)."""
        live = await self.store.live(conversation_id, now=time.time(), lease=self.lease)
        return live is not None and live.replica_id != self.replica_id

    async def refuse_if_elsewhere(self, conversation_id: str) -> None:
        if await self.elsewhere(conversation_id):
            raise InvalidParams(ELSEWHERE, {"conversationId": conversation_id})

    async def take(self, conversation_id: str) -> str:
        """Take the conversation's lease for a new turn of this replica; the turn's id, which `held` is given."""
        turn_id = "t-" + secrets.token_urlsafe(12)
        taken = await self.store.take(
            self.person_id, conversation_id, self.replica_id, turn_id, now=time.time(), lease=self.lease
        )
        if not taken:
            raise InvalidParams(ELSEWHERE, {"conversationId": conversation_id})
        return turn_id

    @asynccontextmanager
    async def held(self, conversation_id: str, turn_id: str, task_group: anyio.abc.TaskGroup) -> AsyncIterator[None]:
        """Renew the taken lease while the turn runs (a third of the lease apart), and give it back after."""
        beating = anyio.CancelScope()

        async def beat() -> None:
            with beating:
                await self._beat(conversation_id, turn_id)

        task_group.start_soon(beat)
        try:
            yield
        finally:
            beating.cancel()
            with anyio.CancelScope(shield=True):
                try:
                    await self.store.release(conversation_id, turn_id)
                except Exception:  # the database is down: the lease runs out by itself
                    logger.warning("chat: the turn lease of %s could not be given back", conversation_id)

    async def _beat(self, conversation_id: str, turn_id: str) -> None:
        while True:
            await anyio.sleep(self.lease / 3)
            try:
                await self.store.beat(conversation_id, turn_id, time.time())
            except Exception:  # one missed beat is not the end of the turn; the next one may get through
                logger.warning("chat: the turn lease of %s could not be renewed", conversation_id)
