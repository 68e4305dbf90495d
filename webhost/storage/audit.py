"""The audit rows and the remembered app permissions, on the shared database (`webhost.audit` writes them).

Portable SQL only (SQLite and PostgreSQL run the same tests): ids come from the database (AUTOINCREMENT on SQLite,
an identity column elsewhere) and only grow, so "newest first" is `ORDER BY id DESC`. `detail` is
the JSON text `webhost.audit` already fitted under the row cap, kept as text rather than `sa.JSON`:
rows an older version cut mid-document must still be stored and read back (marked), which a JSON
column would refuse. Writes go through one connection the caller holds (`webhost.audit`'s writer);
reads take their own from the pool.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, metadata
from webhost.storage.portable import upsert

logger = logging.getLogger(__name__)

# The columns in their export order: the person columns came last, so CSV readers that count keep working.
COLUMNS = ("id", "ts", "session", "server", "frame", "kind", "decision", "summary", "detail", "user_id", "user_name")
LABEL = 200  # session, server, frame, kind, decision, user_id, user_name (webhost.audit cuts them to this)
IMPORT_BATCH = 2000

audit = sa.Table(
    "audit",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("ts", sa.Float, nullable=False),
    sa.Column("session", sa.String(LABEL)),
    sa.Column("server", sa.String(LABEL)),
    sa.Column("frame", sa.String(LABEL)),
    sa.Column("kind", sa.String(LABEL), nullable=False),
    sa.Column("decision", sa.String(LABEL)),
    sa.Column("summary", sa.Text),
    sa.Column("detail", sa.Text),
    sa.Column("user_id", sa.String(LABEL)),
    sa.Column("user_name", sa.String(LABEL)),
    sa.Index("audit_server", "server", "id"),
    sa.Index("audit_user", "user_id", "id"),
    sa.Index("audit_ts", "ts"),
    sqlite_autoincrement=True,  # ids never reused after the newest rows are pruned
)

# What a person allowed (or refused) a server's apps, remembered across their sessions; one person's
# grant is never another's.
granted_permissions = sa.Table(
    "granted_permissions",
    metadata,
    sa.Column("person_id", sa.String(255), primary_key=True),
    sa.Column("server", sa.String(255), primary_key=True),
    sa.Column("permission", sa.String(64), primary_key=True),
    sa.Column("granted", sa.Boolean, nullable=False),
    sa.Column("ts", sa.Float, nullable=False),
)

_INSERT = audit.insert().returning(audit.c.id, sort_by_parameter_order=True)


async def insert_rows(db: AsyncConnection, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Insert rows (one statement, in order) and return their ids in the same order."""
    if not rows:
        return []
    result = await db.execute(_INSERT, list(rows))
    return [int(row_id) for row_id in result.scalars().all()]


async def stored_already(db: AsyncConnection, row: dict[str, Any]) -> bool:
    """Whether this very row is in the log (a spooled row whose commit came just before a SIGKILL, before the
    spool heard of it): same time, kind, person, session, frame and summary."""
    same = sa.select(audit.c.id).where(
        audit.c.ts == row["ts"],
        audit.c.kind == row["kind"],
        audit.c.user_id.is_not_distinct_from(row["user_id"]),
        audit.c.session.is_not_distinct_from(row["session"]),
        audit.c.frame.is_not_distinct_from(row["frame"]),
        audit.c.summary.is_not_distinct_from(row["summary"]),
    )
    return (await db.execute(same.limit(1))).first() is not None


async def prune(db: AsyncConnection, *, before_ts: float | None, max_rows: int | None) -> None:
    """Delete rows older than `before_ts` and all but the newest `max_rows` (by id: both use an index;
    ids only grow, and a gap left by a rolled-back insert only makes the cap keep a few rows fewer)."""
    if before_ts is not None:
        await db.execute(audit.delete().where(audit.c.ts < before_ts))
    if max_rows is not None:
        newest = sa.select(sa.func.max(audit.c.id)).scalar_subquery()
        await db.execute(audit.delete().where(audit.c.id <= newest - max_rows))


async def set_permission(
    db: AsyncConnection, person_id: str, server: str, permission: str, granted: bool, ts: float
) -> None:
    # An upsert: replicas (each its own audit writer) may store the same person's grant at once.
    row = {"person_id": person_id, "server": server, "permission": permission, "granted": granted, "ts": ts}
    await upsert(db, granted_permissions, row, key=("person_id", "server", "permission"))


class AuditReader:
    """The read side: each query on a pooled connection of its own."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def entries(
        self, *, server: str | None, user: str | None, limit: int, before: int | None
    ) -> list[dict[str, Any]]:
        """The newest rows first, as stored (`detail` still text)."""
        query = sa.select(*(audit.c[c] for c in COLUMNS)).order_by(audit.c.id.desc()).limit(limit)
        if user is not None:
            query = query.where(audit.c.user_id == user)
        if server:
            query = query.where(audit.c.server == server)
        if before:
            query = query.where(audit.c.id < before)
        async with self.storage.read() as db:
            return [dict(row) for row in (await db.execute(query)).mappings()]

    async def granted(self, person_id: str, server: str) -> set[str]:
        query = sa.select(granted_permissions.c.permission).where(
            granted_permissions.c.person_id == person_id,
            granted_permissions.c.server == server,
            granted_permissions.c.granted.is_(True),
        )
        async with self.storage.read() as db:
            return set((await db.execute(query)).scalars().all())


# -- the audit file of 0.1 ------------------------------------------------------------------------


def _read_legacy(path: Path, after: int) -> tuple[list[dict[str, Any]], int]:
    """One batch of an 0.1 audit file's rows (id > after), with the columns that file has."""
    db = sqlite3.connect(path)
    try:
        present = {row[1] for row in db.execute("PRAGMA table_info(audit)")}
        wanted = [c for c in COLUMNS if c in present]
        query = f"SELECT {', '.join(wanted)} FROM audit WHERE id > ? ORDER BY id LIMIT ?"  # the names come from COLUMNS
        rows = [dict(zip(wanted, values, strict=True)) for values in db.execute(query, (after, IMPORT_BATCH))]
    finally:
        db.close()
    last = int(rows[-1]["id"]) if rows else after
    return [_legacy_row(row) for row in rows], last


def _read_legacy_grants(path: Path) -> list[tuple[str, str, bool, float]]:
    db = sqlite3.connect(path)
    try:
        if not db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'granted_permissions'"
        ).fetchone():
            return []
        return [
            (str(server), str(permission), bool(granted), float(ts or 0))
            for server, permission, granted, ts in db.execute(
                "SELECT server, permission, granted, ts FROM granted_permissions"
            )
        ]
    finally:
        db.close()


def _text(value: Any, limit: int | None = None) -> str | None:
    """A stored value as text the new table takes (bytes are decoded; NUL and lone surrogates replaced)."""
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    text = text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")
    return text if limit is None else text[:limit]


def _legacy_row(row: dict[str, Any]) -> dict[str, Any]:
    ts = row.get("ts")
    return {
        "ts": float(ts) if isinstance(ts, int | float) else 0.0,
        "session": _text(row.get("session"), LABEL),
        "server": _text(row.get("server"), LABEL),
        "frame": _text(row.get("frame"), LABEL),
        "kind": _text(row.get("kind"), LABEL) or "?",
        "decision": _text(row.get("decision"), LABEL),
        "summary": _text(row.get("summary")),
        "detail": _text(row.get("detail")),
        "user_id": _text(row.get("user_id"), LABEL),
        "user_name": _text(row.get("user_name"), LABEL),
    }


async def import_legacy_file(db: AsyncConnection, path: Path, grants_person: str) -> int | None:
    """Copy the rows of an 0.1 audit file (`audit.sqlite3` in the data folder) into the table, in their
    order, and rename the file to `audit.sqlite3.imported` so that it is imported once. Its remembered
    permissions had no person: they become `grants_person`'s (token mode's one person). Returns the rows
    copied, or None when there was no file or it could not be imported (logged; nothing is copied)."""
    if not path.is_file():
        return None
    done = path.with_name(path.name + ".imported")
    copied = 0
    try:
        async with db.begin():
            after = 0
            while True:
                rows, after = await anyio.to_thread.run_sync(_read_legacy, path, after)
                if not rows:
                    break
                await db.execute(audit.insert(), rows)
                copied += len(rows)
            for server, permission, granted, ts in await anyio.to_thread.run_sync(_read_legacy_grants, path):
                await set_permission(db, grants_person, server, permission, granted, ts)
            path.rename(done)  # inside the transaction: if the rename fails, nothing was copied
    except (OSError, sqlite3.Error, sa.exc.SQLAlchemyError) as exc:
        if done.exists() and not path.exists():  # renamed, then the commit failed: import it next time
            done.rename(path)
        logger.error("the audit log of an earlier webhost (%s) could not be imported: %s", path, exc)
        return None
    logger.warning("imported %d audit rows from %s (kept as %s)", copied, path, done.name)
    return copied
