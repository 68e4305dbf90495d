"""The roots an admin gives every person, and those each person adds for themselves (`roots/list`), in order.

One row per root: `owner` is the person's id, or `""` for the admin's roots (given to everyone). A list is
replaced as a whole (the page edits it as one list), in one transaction.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, metadata
from webhost.storage.portable import fit

SHARED = ""  # the owner of the admin's roots

roots = sa.Table(
    "roots",
    metadata,
    sa.Column("owner", sa.String(255), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("uri", sa.Text, nullable=False),
    sa.Column("name", sa.Text),
    sa.Column("updated_at", sa.Float, nullable=False),
)


class RootsStore:
    """Read and replace one owner's roots."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def get(self, owner: str) -> list[dict[str, Any]]:
        query = sa.select(roots.c.uri, roots.c.name).where(roots.c.owner == owner).order_by(roots.c.position)
        async with self.storage.read() as db:
            rows = (await db.execute(query)).all()
        return [{"uri": row.uri, **({"name": row.name} if row.name else {})} for row in rows]

    async def put(self, owner: str, items: list[dict[str, Any]]) -> None:
        now = time.time()

        async def work(db: AsyncConnection) -> None:
            await db.execute(roots.delete().where(roots.c.owner == owner))
            if items:
                await db.execute(
                    roots.insert(),
                    [
                        {
                            "owner": owner,
                            "position": index,
                            "uri": fit(item["uri"]),
                            "name": fit(item["name"]) if item.get("name") else None,
                            "updated_at": now,
                        }
                        for index, item in enumerate(items)
                    ],
                )

        await self.storage.write(work)  # one transaction, in turn with this process's other writes (SQLite)
