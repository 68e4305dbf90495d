"""Daily token budgets that hold across turns, tabs and replicas: a step's tokens are reserved before its
request and settled to what the provider reported after it.

`reserve` runs in one transaction: it first takes the person's day row (`chat_budget_days`, an UPDATE, so
a second reservation of the same person, on any replica, waits for the first to commit), then adds the
tokens used that day (`chat_usage`) to the tokens held by reservations still open, and holds the new one
only if something is left. So at most one step's reservation can pass the budget, however many turns race.
`settle` records the step's reported usage and drops its hold in one transaction (under the same row), so
no reservation is counted twice or missed in between.

A hold belongs to its replica: one whose heartbeat (`replicas`, webhost/journal.py) is older than the lease
is gone, and its holds no longer count (they are deleted by the next reservation of that person).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.conversations import chat_usage
from webhost.storage.db import Storage, metadata
from webhost.storage.live_calls import replicas
from webhost.storage.portable import upsert

chat_budget_days = sa.Table(
    "chat_budget_days",
    metadata,
    sa.Column("person_id", sa.String(255), primary_key=True),
    sa.Column("day", sa.String(10), primary_key=True),
    sa.Column("reservations", sa.BigInteger, nullable=False),  # made that day; updating it takes the row's lock
)
chat_budget_holds = sa.Table(
    "chat_budget_holds",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("day", sa.String(10), nullable=False),
    sa.Column("replica_id", sa.String(64), nullable=False),
    sa.Column("tokens", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("chat_budget_holds_person", "person_id", "day"),
)


@dataclass(frozen=True)
class Hold:
    """One step's reservation (id None: the person has no budget, nothing was held)."""

    id: str | None
    person_id: str
    day: str
    tokens: int


@dataclass(frozen=True)
class Refused:
    """The budget is used up: `used` tokens reported and `held` reserved by steps still running."""

    budget: int
    used: int
    held: int


@dataclass(frozen=True)
class Usage:
    """What one step reported, recorded where the chat's totals are kept (`chat_usage`)."""

    model_id: str
    conversation_id: str
    input_tokens: int
    output_tokens: int


class BudgetStore:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def reserve(
        self, person_id: str, day: str, tokens: int, budget: int, *, replica_id: str, now: float, lease: float
    ) -> Hold | Refused:
        """Hold `tokens` of the person's day if any of `budget` is left (used + held < budget)."""
        hold_id = "bh-" + secrets.token_urlsafe(12)
        key = {"person_id": person_id, "day": day}

        async def work(db: AsyncConnection) -> Hold | Refused:
            await upsert(db, chat_budget_days, {**key, "reservations": 0}, key=list(key), keep=["reservations"])
            await db.execute(
                chat_budget_days.update()
                .where(chat_budget_days.c.person_id == person_id, chat_budget_days.c.day == day)
                .values(reservations=chat_budget_days.c.reservations + 1)
            )  # from here on, the person's other reservations and settlements wait for this transaction
            alive = sa.select(replicas.c.id).where(replicas.c.heartbeat_at >= now - lease)
            mine = sa.or_(chat_budget_holds.c.replica_id == replica_id, chat_budget_holds.c.replica_id.in_(alive))
            await db.execute(
                chat_budget_holds.delete().where(chat_budget_holds.c.person_id == person_id, sa.not_(mine))
            )
            used = await _used(db, person_id, day)
            held = await _held(db, person_id, day)
            if used + held >= budget:
                return Refused(budget, used, held)
            await db.execute(
                chat_budget_holds.insert().values(
                    id=hold_id, **key, replica_id=replica_id, tokens=tokens, created_at=now
                )
            )
            return Hold(hold_id, person_id, day, tokens)

        return await self.storage.write(work)

    async def settle(self, hold: Hold, usage: Usage) -> None:
        """Record what the step used and drop its hold, in one transaction."""

        async def work(db: AsyncConnection) -> None:
            if hold.id is not None:
                await db.execute(
                    chat_budget_days.update()
                    .where(chat_budget_days.c.person_id == hold.person_id, chat_budget_days.c.day == hold.day)
                    .values(reservations=chat_budget_days.c.reservations)
                )  # the person's row first, in the order `reserve` takes them (no deadlock between the two)
                await db.execute(chat_budget_holds.delete().where(chat_budget_holds.c.id == hold.id))
            if usage.input_tokens or usage.output_tokens:
                await _add_usage(db, hold.person_id, hold.day, usage)

        await self.storage.write(work)

    async def used_on(self, person_id: str, day: str) -> int:
        async with self.storage.read() as db:
            return await _used(db, person_id, day)


async def _used(db: AsyncConnection, person_id: str, day: str) -> int:
    query = sa.select(sa.func.coalesce(sa.func.sum(chat_usage.c.input_tokens + chat_usage.c.output_tokens), 0))
    query = query.where(chat_usage.c.person_id == person_id, chat_usage.c.day == day)
    return int((await db.execute(query)).scalar() or 0)


async def _held(db: AsyncConnection, person_id: str, day: str) -> int:
    query = sa.select(sa.func.coalesce(sa.func.sum(chat_budget_holds.c.tokens), 0)).where(
        chat_budget_holds.c.person_id == person_id, chat_budget_holds.c.day == day
    )
    return int((await db.execute(query)).scalar() or 0)


async def _add_usage(db: AsyncConnection, person_id: str, day: str, usage: Usage) -> None:
    key = {"person_id": person_id, "day": day, "model_id": usage.model_id, "conversation_id": usage.conversation_id}
    updated = await db.execute(
        chat_usage.update()
        .where(*(chat_usage.c[name] == value for name, value in key.items()))
        .values(
            input_tokens=chat_usage.c.input_tokens + usage.input_tokens,
            output_tokens=chat_usage.c.output_tokens + usage.output_tokens,
        )
    )
    if updated.rowcount == 0:
        row = {**key, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        await upsert(db, chat_usage, row, key=list(key))
