"""A web session's refresh token and the groups it re-reads (oidc mode; webhost/auth/refresh.py): which session
of a person is due, claiming it (so that of several replicas one refreshes it), and storing what the provider
said. The token rests sealed (`auth/signin.py` `TokenSeal`); the person's groups and role go to `people`, which
every request's session lookup reads, so the next request of the person, on any replica, has them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.people import Person
from webhost.storage.db import Storage, people, save_person, web_sessions


@dataclass(frozen=True)
class DueSession:
    """A person's newest live session that keeps a refresh token."""

    id_hash: str
    refreshed_at: float
    sealed_refresh_token: bytes


class SessionRefreshes:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def due(self, person_id: str, *, before: float, now: float) -> DueSession | None:
        """The person's newest live session with a refresh token whose groups were read before `before`."""
        query = (
            sa.select(web_sessions.c.id_hash, web_sessions.c.refreshed_at, web_sessions.c.sealed_refresh_token)
            .where(
                web_sessions.c.person_id == person_id,
                web_sessions.c.revoked_at.is_(None),
                web_sessions.c.expires_at > now,
                web_sessions.c.sealed_refresh_token.is_not(None),
            )
            .order_by(web_sessions.c.created_at.desc())
            .limit(1)
        )
        async with self.storage.read() as db:
            row = (await db.execute(query)).first()
        if row is None or (row.refreshed_at or 0.0) >= before:
            return None
        return DueSession(str(row.id_hash), float(row.refreshed_at or 0.0), bytes(row.sealed_refresh_token))

    async def claim(self, due: DueSession, now: float) -> bool:
        """Take this refresh: true for one replica only (the row still has the time it was read with)."""

        async def work(db: AsyncConnection) -> int:
            result = await db.execute(
                web_sessions.update()
                .where(web_sessions.c.id_hash == due.id_hash, web_sessions.c.refreshed_at == due.refreshed_at)
                .values(refreshed_at=now)
            )
            return int(result.rowcount or 0)

        return await self.storage.write(work) == 1

    async def store(self, id_hash: str, sealed_refresh_token: bytes | None, person: Person, now: float) -> None:
        """The provider's answer: the (rotated) refresh token, and the person as it names them now."""

        async def work(db: AsyncConnection) -> None:
            if sealed_refresh_token is not None:
                await db.execute(
                    web_sessions.update()
                    .where(web_sessions.c.id_hash == id_hash)
                    .values(sealed_refresh_token=sealed_refresh_token)
                )
            await save_person(db, person, now)

        await self.storage.write(work)

    async def end(self, person_id: str, now: float) -> None:
        """The provider refused the refresh (the person was removed, or their grant revoked): their sessions end."""

        async def work(db: AsyncConnection) -> None:
            await db.execute(
                web_sessions.update()
                .where(web_sessions.c.person_id == person_id, web_sessions.c.revoked_at.is_(None))
                .values(revoked_at=now)
            )

        await self.storage.write(work)

    async def person(self, person_id: str) -> Person | None:
        """The person as `people` has them now (another replica may have refreshed their groups)."""
        async with self.storage.read() as db:
            row = (await db.execute(sa.select(people).where(people.c.id == person_id))).mappings().first()
        if row is None:
            return None
        return Person(
            id=row["id"],
            name=row["name"],
            email=row["email"],
            role="admin" if row["role"] == "admin" else "member",
            groups=tuple(row["groups"] or ()),
        )
