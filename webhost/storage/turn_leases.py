"""Who runs the turn of a conversation: one lease row per conversation, with the replica running it and a
heartbeat that replica renews while the turn runs.

A turn starts only after its replica took the lease (`take`, one statement: a row no one holds, or one whose
heartbeat is older than the lease, or one this replica held). While the lease is live no other replica
starts a turn in that conversation, and a message it finds still streaming there is not interrupted: it is
being written elsewhere. Once the heartbeat stops (the replica was killed) and the lease has run out, the
message is declared interrupted by whoever opens the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, metadata
from webhost.storage.portable import upsert

chat_turn_leases = sa.Table(
    "chat_turn_leases",
    metadata,
    sa.Column("conversation_id", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("replica_id", sa.String(64), nullable=False),
    sa.Column("turn_id", sa.String(64), nullable=False),  # which turn of that replica: only it renews and ends it
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
)


@dataclass(frozen=True)
class TurnLease:
    conversation_id: str
    replica_id: str
    heartbeat_at: float


class TurnLeaseStore:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def take(
        self, person_id: str, conversation_id: str, replica_id: str, turn_id: str, *, now: float, lease: float
    ) -> bool:
        """Take the conversation's lease for this replica's turn: False when another replica's lease is still live."""
        values = {
            "conversation_id": conversation_id,
            "person_id": person_id,
            "replica_id": replica_id,
            "turn_id": turn_id,
            "started_at": now,
            "heartbeat_at": now,
        }
        row = chat_turn_leases.c

        async def work(db: AsyncConnection) -> bool:
            await upsert(db, chat_turn_leases, {**values, "replica_id": ""}, key=["conversation_id"], keep=values)
            taken = await db.execute(
                chat_turn_leases.update()
                .where(
                    row.conversation_id == conversation_id,
                    row.person_id == person_id,
                    sa.or_(row.replica_id.in_(["", replica_id]), row.heartbeat_at < now - lease),
                )
                .values(replica_id=replica_id, turn_id=turn_id, started_at=now, heartbeat_at=now)
            )
            return bool(taken.rowcount)

        return await self.storage.write(work)

    async def beat(self, conversation_id: str, turn_id: str, now: float) -> bool:
        """Renew this turn's lease; False when it is not this turn's any more."""

        async def work(db: AsyncConnection) -> bool:
            renewed = await db.execute(
                chat_turn_leases.update()
                .where(chat_turn_leases.c.conversation_id == conversation_id)
                .where(chat_turn_leases.c.turn_id == turn_id)
                .values(heartbeat_at=now)
            )
            return bool(renewed.rowcount)

        return await self.storage.write(work)

    async def release(self, conversation_id: str, turn_id: str) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                chat_turn_leases.delete().where(
                    chat_turn_leases.c.conversation_id == conversation_id, chat_turn_leases.c.turn_id == turn_id
                )
            )

        await self.storage.write(work)

    async def live(self, conversation_id: str, *, now: float, lease: float) -> TurnLease | None:
        """The conversation's lease while it is live (its heartbeat younger than `lease`)."""
        row = chat_turn_leases.c
        query = sa.select(row.conversation_id, row.replica_id, row.heartbeat_at).where(
            row.conversation_id == conversation_id, row.replica_id != "", row.heartbeat_at >= now - lease
        )
        async with self.storage.read() as db:
            found = (await db.execute(query)).first()
        return None if found is None else TurnLease(found[0], found[1], found[2])
