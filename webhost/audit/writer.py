"""The audit log's writer: one task stores whatever has queued up in one transaction, on a connection of its own,
and keeps the rows nobody waits for while the database cannot be written, trying them again (`RETRY_SECONDS`)."""

from __future__ import annotations

import contextlib
import logging
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.errors import POLICY_REFUSED, WebhostError
from webhost.storage import audit as store
from webhost.storage.db import Storage
from webhost.storage.spool import Spool

logger = logging.getLogger("webhost.audit")

MAX_BATCH = 500  # queued writes per transaction
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)  # pauses between tries of the rows owed while the database is down
MAX_OWED = 10_000  # rows owed in memory; past it the newest wait in the spool alone, for the next start
# What says the database cannot be written at all (down, unreachable, full, read-only), not that a row is wrong.
_OUTAGE = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError, OSError, TimeoutError)


class AuditUnavailable(WebhostError):
    """The audit log cannot be written (disk full, read-only, corrupt): the action is refused."""

    code = POLICY_REFUSED
    outage = False  # the database could not be written at all (rather than this row refused): worth a retry


@dataclass
class _Job:
    """One write for the writer task, or (`barrier`) a point that a reader waits for."""

    kind: Literal["row", "row-once", "prune", "permission", "barrier"]  # row-once: a spooled row left over
    args: dict[str, Any]
    done: anyio.Event | None  # None: nobody waits, and a failure is logged
    row_id: int | None = None
    error: AuditUnavailable | None = None
    seq: int | None = None  # its line in the spool (a row nobody waits for)


class _Writer:
    """`AuditLog`'s writer task and transactions (a base class: they share the log's queue and state)."""

    storage: Storage
    _spool: Spool | None
    _clock: Callable[[], float]
    _queue: deque[_Job]
    _owed: deque[_Job]
    _wake: anyio.Event
    _stopped: anyio.Event
    _closing: bool
    _db: AsyncConnection | None
    _retry_at: float
    _tries: int

    async def _run(self) -> None:
        try:
            while True:
                if self._owed and (self._closing or self._clock() >= self._retry_at):
                    self._queue.extendleft(reversed(self._owed))  # before what came since: in their order
                    self._owed.clear()
                if not self._queue:
                    if self._closing:
                        return
                    self._wake = anyio.Event()
                    with anyio.move_on_after(max(0.0, self._retry_at - self._clock()) if self._owed else math.inf):
                        await self._wake.wait()
                    continue
                batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
                await self._write(batch)
        finally:
            self._stopped.set()
            for job in self._queue:  # cancelled with writes still queued: nobody may wait forever
                job.error = AuditUnavailable("the audit log was closed before this row was stored")
                if job.done is not None:
                    job.done.set()

    async def _write(self, batch: list[_Job]) -> None:
        jobs = [job for job in batch if job.kind != "barrier"]
        error = await self._transaction(jobs) if jobs else None
        if error is not None:
            if len(jobs) > 1 and not error.outage:  # one bad write must not sink the others: each on its own
                for job in jobs:
                    job.error = await self._transaction([job])
            else:
                for job in jobs:
                    job.error = error
        owed = 0
        for job in batch:
            if job.seq is not None and job.error is not None and job.error.outage:
                owed += self._owe(job)
                continue
            if job.error is not None and job.done is None:
                logger.error("%s (%s not recorded)", job.error.message, job.args.get("kind", job.kind))
            if job.seq is not None and self._spool is not None:
                self._spool.settled([job.seq])
            if job.done is not None:
                job.done.set()
        if owed:
            self._retry_at = self._clock() + RETRY_SECONDS[min(self._tries, len(RETRY_SECONDS) - 1)]
            if self._tries == 0:
                logger.warning("audit log: the database cannot be written; %d rows wait to be tried again", owed)
            self._tries += 1
        elif jobs and all(job.error is None for job in jobs):
            if self._tries:
                logger.warning("audit log: the database is back; the rows that waited are stored")
            self._tries = 0

    def _owe(self, job: _Job) -> int:
        """A row nobody waits for met an outage: tried again later (at a clean stop, once more); it stays in the
        spool meanwhile, so past `MAX_OWED`, or at the stop, it is left for the next start rather than lost."""
        if self._closing and self._tries > 0:
            return 0
        if len(self._owed) >= MAX_OWED:
            return 0
        job.error = None
        self._owed.append(job)
        return 1

    async def _connection(self) -> AsyncConnection:
        """The writer's connection, opened again only if it was lost (a failed statement keeps it)."""
        if self._db is None or self._db.closed or self._db.invalidated:
            self._db = await self.storage.engine.connect()
        return self._db

    async def _transaction(self, jobs: list[_Job]) -> AuditUnavailable | None:
        """Run these writes, in order, in one transaction; the error that stopped it, if one did. The
        writer's connection sits idle between writes, so the database may have dropped it (a PostgreSQL
        restart or failover): then the transaction, which did not commit, is run once more on a new one."""
        async with self.storage.transactions.serialised():
            return await self._transaction_now(jobs)

    async def _transaction_now(self, jobs: list[_Job]) -> AuditUnavailable | None:
        error, lost = await self._attempt(jobs)
        if lost:
            logger.warning("audit log: the database closed the writer's connection; writing on a new one")
            error, _lost = await self._attempt(jobs)
        return error

    async def _attempt(self, jobs: list[_Job]) -> tuple[AuditUnavailable | None, bool]:
        """One try: the error, and whether it was the connection that was lost."""
        try:
            db = await self._connection()
            async with db.begin():
                index = 0
                while index < len(jobs):
                    job = jobs[index]
                    if job.kind == "row":  # a run of rows is one statement
                        end = index + 1
                        while end < len(jobs) and jobs[end].kind == "row":
                            end += 1
                        run = jobs[index:end]
                        ids = await store.insert_rows(db, [queued.args for queued in run])
                        for queued, row_id in zip(run, ids, strict=True):
                            queued.row_id = row_id
                        index = end
                        continue
                    if job.kind == "row-once" and not await store.stored_already(db, job.args):
                        job.row_id = (await store.insert_rows(db, [job.args]))[0]
                    elif job.kind == "prune":
                        await store.prune(db, **job.args)
                    elif job.kind == "permission":
                        await store.set_permission(db, **job.args)
                    index += 1
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            for job in jobs:
                job.row_id = None
            lost = isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated
            if lost or (self._db is not None and self._db.invalidated):
                stale, self._db = self._db, None  # the next `_connection` opens a new one
                if stale is not None:
                    with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                        await stale.close()
                error = self._unavailable(exc, log=False)
                error.outage = True
                return error, True
            error = self._unavailable(exc)
            error.outage = isinstance(exc, _OUTAGE)
            return error, False
        except Exception as exc:  # a bug here must not end the writer (and every tab with it): refuse, log
            logger.exception("audit log: unexpected error while writing")
            for job in jobs:
                job.row_id = None
            return self._unavailable(exc), False
        return None, False

    def _unavailable(self, exc: BaseException, *, log: bool = True) -> AuditUnavailable:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]
        if log:
            logger.error("audit log: write failed: %s", reason)
        return AuditUnavailable(
            f"the audit log is unavailable (it cannot be written: {reason}); the action was refused",
            {"reason": reason},
        )
