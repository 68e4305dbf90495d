"""An audit log on a real, migrated database (SQLite in a temporary folder, or the `database_url` a test
is given: tests/conftest.py has one per engine), with its writer running."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.audit import AuditLimits, AuditLog, open_audit_log
from webhost.storage.db import Storage
from webhost.storage.urls import DEFAULT_FILE, database_url


def database_file(data_dir: Path) -> Path:
    """The SQLite file the storage layer keeps in this data folder (where the audit rows are)."""
    return data_dir / DEFAULT_FILE


@asynccontextmanager
async def audit_log(
    data_dir: Path,
    limits: AuditLimits | None = None,
    *,
    legacy_file: Path | None = None,
    clock: Callable[[], float] | None = None,
    wall_clock: Callable[[], float] | None = None,
    url: str | None = None,
) -> AsyncIterator[AuditLog]:
    storage = Storage(url or database_url(None, data_dir))
    await storage.start()
    clocks: dict[str, Any] = {}
    if clock is not None:
        clocks["clock"] = clock
    if wall_clock is not None:
        clocks["wall_clock"] = wall_clock
    try:
        async with open_audit_log(storage, limits, legacy_file=legacy_file, **clocks) as log:
            yield log
    finally:
        await storage.close()


async def writer_connection(log: AuditLog) -> AsyncConnection:
    """The connection the log's writer stores rows on (idle between writes: the caller waits for `flushed`)."""
    await log.flushed()
    connection = log._db
    assert connection is not None
    return connection


async def on_writer(log: AuditLog, sql: str) -> Any:
    """Run one statement on the writer's connection (e.g. a PRAGMA that breaks it), committed."""
    connection = await writer_connection(log)
    result = await connection.exec_driver_sql(sql)
    rows = result.fetchall() if result.returns_rows else []
    await connection.commit()
    return rows


async def on_storage(log: AuditLog, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
    """Run one statement on a pooled connection of its own (not the writer's), committed: what another
    program (or an older webhost) does to the table."""
    async with log.storage.engine.begin() as db:
        result = await db.execute(sa.text(sql), params or {})
        return list(result.fetchall()) if result.returns_rows else []
