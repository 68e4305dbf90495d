"""Replicas and the calls each one is running, so that another replica can take over when one stops.

Every `webhost serve` process is a replica with a random id and a heartbeat row; a replica whose row
is gone (it stopped cleanly) or whose heartbeat is older than the lease (it crashed, or was killed)
owns nothing any more. Each running page call (tools/call, resources/read, prompts/get) has a
`live_calls` row owned by its replica. While the call waits on a 2026-07-28 input round, the row also
holds that round, sealed with AES-GCM: the call's arguments (the person's own, possibly secret), the
server's `inputRequests` and its opaque `requestState`; the person's id and the row's id are the
associated data, so a sealed round copied to another row or person does not open. A replica takes a
row over with a compare-and-set on its owner, so two replicas never both take the same call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, metadata
from webhost.storage.envelope import Envelope
from webhost.storage.portable import fitted

replicas = sa.Table(
    "replicas",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
)
live_calls = sa.Table(
    "live_calls",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("replica_id", sa.String(64), nullable=False),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("server", sa.String(255), nullable=False),
    sa.Column("method", sa.String(64), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("call_id", sa.String(200), nullable=False),
    sa.Column("tab_id", sa.String(64)),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("question", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("sealed_round", sa.LargeBinary),
    sa.Column("round_at", sa.Float),
    sa.Index("live_calls_person", "person_id"),
)


# Columns whose text a page or a server chose: made storable on both engines, so that one odd value does not
# fail a batch (every call of the replica with it). Cut to the column, a call id still names the call on resume
# in all but the case of a page that sent a longer one.
OUTSIDE_TEXT = ("server", "method", "name", "call_id", "tab_id")


@dataclass(frozen=True)
class LiveCall:
    """One call as its row has it; `round` is the opened input round (None: not waiting on one)."""

    id: str
    replica_id: str
    person_id: str
    server: str
    method: str
    name: str
    call_id: str
    started_at: float
    question: bool
    round: dict[str, Any] | None
    sealed: bool = False  # it had a round (which `round` is None for if it does not open under this secret)


@dataclass(frozen=True)
class Orphans:
    """A person's calls whose replica is gone, and when to look again for those of replicas still alive."""

    calls: list[LiveCall]
    recheck_in: float | None


class RoundSeal:
    """AES-GCM over a round's JSON, bound to the person and the row."""

    def __init__(self, key: bytes) -> None:
        self._envelope = Envelope(key, "round")

    def seal(self, person_id: str, row_id: str, value: Mapping[str, Any]) -> bytes:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        return self._envelope.seal(body, _bound(person_id, row_id))

    def open(self, person_id: str, row_id: str, sealed: bytes) -> dict[str, Any] | None:
        plain = self._envelope.open(sealed, _bound(person_id, row_id))  # None: another secret, or tampered with
        if plain is None:
            return None
        try:
            value = json.loads(plain.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Write:
    """One change to `live_calls`: insert a row, update some of its columns, or delete it."""

    kind: str  # "insert" | "update" | "delete"
    row_id: str
    values: Mapping[str, Any]


class LiveCallStore:
    def __init__(self, storage: Storage, seal: RoundSeal) -> None:
        self.storage = storage
        self.seal = seal

    # -- replicas ---------------------------------------------------------------------------------

    async def beat(self, replica_id: str, now: float) -> None:
        """Say this replica is alive (creates its row on the first beat)."""

        async def work(db: AsyncConnection) -> None:
            updated = await db.execute(replicas.update().where(replicas.c.id == replica_id).values(heartbeat_at=now))
            if updated.rowcount == 0:
                await db.execute(replicas.insert().values(id=replica_id, started_at=now, heartbeat_at=now))

        await self.storage.write(work)

    async def release(self, replica_id: str) -> None:
        """A clean stop: what this replica still owns is free for any other replica at once."""

        async def work(db: AsyncConnection) -> None:
            await db.execute(replicas.delete().where(replicas.c.id == replica_id))

        await self.storage.write(work)

    async def prune(self, now: float, *, older_than: float) -> None:
        """Forget replicas and calls nobody came back for (a person who never opened webhost again)."""

        async def work(db: AsyncConnection) -> None:
            await db.execute(replicas.delete().where(replicas.c.heartbeat_at < now - older_than))
            await db.execute(live_calls.delete().where(live_calls.c.started_at < now - older_than))

        await self.storage.write(work)

    # -- calls ------------------------------------------------------------------------------------

    def sealed_round(self, person_id: str, row_id: str, value: Mapping[str, Any]) -> bytes:
        return self.seal.seal(person_id, row_id, value)

    async def apply(self, writes: Iterable[Write]) -> None:
        """Apply a batch of changes in order, in one transaction."""

        async def work(db: AsyncConnection) -> None:
            for write in writes:
                values = fitted(live_calls, write.values, OUTSIDE_TEXT)
                if write.kind == "insert":
                    await db.execute(live_calls.insert().values(id=write.row_id, **values))
                elif write.kind == "update":
                    await db.execute(live_calls.update().where(live_calls.c.id == write.row_id).values(**values))
                else:
                    await db.execute(live_calls.delete().where(live_calls.c.id == write.row_id))

        await self.storage.write(work)

    async def orphans(self, person_id: str, replica_id: str, now: float, lease: float) -> Orphans:
        """This person's calls owned by replicas that are gone; a call of a replica still within its lease waits."""
        query = (
            sa.select(live_calls, replicas.c.heartbeat_at)
            .outerjoin(replicas, replicas.c.id == live_calls.c.replica_id)
            .where(live_calls.c.person_id == person_id, live_calls.c.replica_id != replica_id)
            .order_by(live_calls.c.started_at)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        calls: list[LiveCall] = []
        recheck: float | None = None
        for row in rows:
            heartbeat = row["heartbeat_at"]
            if heartbeat is not None and heartbeat >= now - lease:
                expires = heartbeat + lease - now
                recheck = expires if recheck is None else min(recheck, expires)
                continue
            calls.append(self._call(row))
        return Orphans(calls, recheck)

    async def claim(self, call: LiveCall, replica_id: str) -> bool:
        """Take a call over from its gone replica; False when another replica took it first."""

        async def work(db: AsyncConnection) -> bool:
            taken = await db.execute(
                live_calls.update()
                .where(live_calls.c.id == call.id, live_calls.c.replica_id == call.replica_id)
                .values(replica_id=replica_id)
            )
            return bool(taken.rowcount == 1)

        return await self.storage.write(work)

    async def calls_of(self, replica_id: str) -> list[LiveCall]:
        query = sa.select(live_calls).where(live_calls.c.replica_id == replica_id)
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        return [self._call(row) for row in rows]

    def _call(self, row: sa.RowMapping) -> LiveCall:
        sealed = row["sealed_round"]
        opened = self.seal.open(row["person_id"], row["id"], bytes(sealed)) if sealed is not None else None
        return LiveCall(
            id=row["id"],
            replica_id=row["replica_id"],
            person_id=row["person_id"],
            server=row["server"],
            method=row["method"],
            name=row["name"],
            call_id=row["call_id"],
            started_at=row["started_at"],
            question=bool(row["question"]),
            round=opened,
            sealed=sealed is not None,
        )


def _bound(person_id: str, row_id: str) -> bytes:
    return b"webhost-round\0" + person_id.encode("utf-8") + b"\0" + row_id.encode("utf-8")
