"""Every read and write of the database goes through here: writes one at a time on SQLite, retried while another
process holds its lock, and a database that is down said in one line.

SQLite takes one writer at a time, for the whole file. Left to themselves, fifty writes started at once (a team's
first morning: every person's first request records them) each take a pooled connection and wait on the file's
lock in SQLite's busy handler, which backs off in sleeps of up to 100 ms; past `busy_timeout` the write fails with
"database is locked". Here the writes of this process queue on one lock instead, in order, so only writes of
other processes sharing the file can find it locked; such a write is run again (`LOCKED_RETRIES`, with a growing
pause). PostgreSQL takes concurrent writers itself, so its writes do not queue.

A write is a function of the connection (`write(work)`), so that the whole transaction can be run again. Reads
are a connection of the pool (`read()`). Either way, a database that cannot be reached, or refuses the work
(PostgreSQL down, a full disk, a read-only file), raises `DatabaseUnavailable` with the reason in one line and the
password masked; errors of the work itself (an integrity error) pass through as they are.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import anyio
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from webhost.redact import Redactor

logger = logging.getLogger(__name__)

T = TypeVar("T")

LOCKED_RETRIES = 6  # on top of SQLite's own busy_timeout wait, each
LOCKED_PAUSE = 0.05  # seconds before the first retry, doubled each time
# Errors that say the database cannot do any work now, rather than that this work is wrong.
_DOWN = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError, OSError, TimeoutError)


class DatabaseUnavailable(Exception):
    """The database cannot be reached or written now; `reason` is one line, without the password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the database is unavailable: {reason}")
        self.reason = reason


class Transactions:
    def __init__(self, engine: AsyncEngine, redactor: Redactor) -> None:
        self.engine = engine
        self._redactor = redactor
        self._serial = engine.dialect.name == "sqlite"
        self._lock: anyio.Lock | None = None  # made on first use, in the event loop that uses it
        self.writes = 0  # transactions committed (tests count them)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reading; `DatabaseUnavailable` when the database is down."""
        db = await self._connect()
        try:
            yield db
        except _DOWN as exc:
            raise DatabaseUnavailable(self.reason(exc)) from None
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise DatabaseUnavailable(self.reason(exc)) from None
            raise
        finally:
            with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                await db.close()

    async def _connect(self) -> AsyncConnection:
        """A connection from the pool; whatever stops the pool from giving one means the database is unavailable."""
        try:
            return await self.engine.connect()
        except (sa.exc.SQLAlchemyError, OSError, TimeoutError) as exc:
            raise DatabaseUnavailable(self.reason(exc)) from None

    async def write(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in one transaction and commit it: on SQLite after this process's earlier writes, and again
        when another process held the file's lock."""
        pause = LOCKED_PAUSE
        for attempt in range(LOCKED_RETRIES + 1):
            try:
                return await self._once(work)
            except sa.exc.OperationalError as exc:
                if not (self._serial and _locked(exc)) or attempt == LOCKED_RETRIES:
                    raise DatabaseUnavailable(self.reason(exc)) from None
            except _DOWN as exc:
                raise DatabaseUnavailable(self.reason(exc)) from None
            except sa.exc.DBAPIError as exc:
                if exc.connection_invalidated:
                    raise DatabaseUnavailable(self.reason(exc)) from None
                raise
            await anyio.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        if not self._serial:
            return await self._transaction(work)
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            return await self._transaction(work)

    async def _transaction(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        db = await self._connect()
        try:
            async with db.begin():
                result = await work(db)
        finally:
            with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                await db.close()
        self.writes += 1
        return result

    def serialised(self) -> contextlib.AbstractAsyncContextManager[None]:
        """For a writer that keeps a connection of its own (the audit log's): its transactions take their turn
        among this process's other writes on SQLite."""
        if not self._serial:
            return contextlib.nullcontext()
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def reason(self, exc: BaseException) -> str:
        """What went wrong, in one line and with the database password masked."""
        cause = getattr(exc, "orig", None) or exc
        text = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        if isinstance(cause, socket.gaierror):
            text = f"cannot find the host ({cause.strerror})"
        elif isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            # asyncpg's own text is "Connect call failed (host, port)"
            text = f"cannot connect ({os.strerror(cause.errno) if cause.errno else cause.strerror or text})"
        return self._redactor.text(text)[:300]


def _locked(exc: sa.exc.OperationalError) -> bool:
    text = str(exc.orig).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text
