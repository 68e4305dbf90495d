"""Append-only audit log of what apps did and what people decided, on the shared database (`webhost.storage`).

Every app-initiated tool call, link, message, model-context update, permission decision and
effective CSP is one row. webhost never updates a row; it deletes only what the retention
settings (`webhost.audit`) say is too old or too many.

The log survives what is written into it: every stored `detail` is valid JSON no larger than the
per-row cap (oversized fields are replaced by `{"truncated": true, "preview": ..., "bytes": N}`),
rows that do not parse are read back marked unreadable, and each app frame and each person (by
their id; a row without a person, by its session) has a write budget beyond which rows are counted
and coalesced into one "rate limited" row. Every row names the person it belongs to (`user_id`,
`user_name`). The audit file of 0.1 (`audit.sqlite3` in the data folder) is imported once at start.

Writes never wait on the database on the event loop: rows join one queue in the order they were
recorded, and one writer task stores whatever has queued up in one transaction, on a connection of
its own. `record` waits until its row is stored, so that a write that fails (disk full, read-only
database) raises `AuditUnavailable` and the caller refuses what it cannot audit; `note` (a close,
the outcome of something already done) does not wait: it is kept in this process's spool file
(`storage/spool.py`) before `note` returns, so a SIGKILL does not lose it (the next start stores it), and
while the database is down it waits and is tried again (`RETRY_SECONDS`). Reads wait for the writes queued
before them: a row recorded is a row read. On SQLite the writer's transactions take their turn with the
process's other writes (`storage/transactions.py`).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.audit.budgets import AuditLimits, Budgets
from webhost.audit.rows import MAX_SUMMARY, cell, csv_safe, fit_detail, label, read_detail, storable, utf8_length
from webhost.audit.writer import AuditUnavailable, _Job, _Writer
from webhost.people import TOKEN_PERSON_ID, Person
from webhost.redact import Redactor
from webhost.storage import audit as store
from webhost.storage.audit import COLUMNS
from webhost.storage.db import Storage
from webhost.storage.spool import Spool, left_over

logger = logging.getLogger("webhost.audit")


LEGACY_FILE = "audit.sqlite3"  # where 0.1 kept an audit database of its own, in the data folder
MAINTENANCE_SECONDS = 60.0
_ROW_KEYS = {"ts", "session", "server", "frame", "kind", "decision", "summary", "detail", "user_id", "user_name"}


class AuditLog(_Writer):
    def __init__(
        self,
        storage: Storage,
        limits: AuditLimits | None = None,
        *,
        legacy_file: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        spool: Spool | None = None,
    ) -> None:
        self.storage = storage
        self.limits = limits or AuditLimits()
        self._spool = spool  # where rows nobody waits for outlive the process until stored
        self._legacy_file = legacy_file
        self._clock = clock
        self._wall_clock = wall_clock
        self._reader = store.AuditReader(storage)
        self._budgets = Budgets(lambda: self.limits, clock)
        self._queue: deque[_Job] = deque()
        self._wake = anyio.Event()
        self._stopped = anyio.Event()
        self._running = False
        self._closing = False
        self._db: AsyncConnection | None = None  # the writer's own connection
        self._next_maintenance = self._clock() + MAINTENANCE_SECONDS
        # What the rows of one person (None: everyone's) are read with: the configuration's secrets and those
        # people's input values masked in summaries and details (set by the composition root).
        self.mask: Callable[[str | None], Redactor] = lambda user: Redactor()
        self._owed: deque[_Job] = deque()  # rows nobody waits for, not stored because the database was down
        self._retry_at = 0.0
        self._tries = 0

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Import the 0.1 file (once) and the rows stopped processes still owed, start the writer in
        `task_group`, apply the retention settings."""
        if self._legacy_file is not None:
            async with self.storage.transactions.serialised():
                await store.import_legacy_file(await self._connection(), self._legacy_file, TOKEN_PERSON_ID)
        if self._spool is not None:
            self._spool.open()
            await self._take_over(self._spool.folder.parent)
        self._running = True
        task_group.start_soon(self._run)
        try:
            await self.apply_retention()
        except AuditUnavailable as exc:
            logger.error("%s", exc.message)

    async def close(self) -> None:
        """Store what is still queued (and the "rate limited" rows still owed), then stop the writer."""
        if self._running:
            self._flush_drops(force=True)
            self._closing = True
            self._wake.set()
            await self._stopped.wait()
            self._running = False
        if self._spool is not None:
            self._spool.close()  # what is still owed stays in it, for the next start
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def outage(self) -> bool:
        """Rows wait because the database could not be written (until a write succeeds again)."""
        return self._tries > 0

    async def _take_over(self, data_dir: Path) -> None:
        """Store the rows that processes now gone still owed (their spool files), then forget those files."""
        for left in left_over(data_dir, "audit"):
            rows = [row for row in left.rows if set(row) == _ROW_KEYS]
            error = await self._transaction([_Job("row-once", row, None) for row in rows]) if rows else None
            if error is not None:
                left.release()
                logger.error("audit log: %d rows left by a stopped webhost (%s) wait: %s", len(rows), left.path, error)
                continue
            left.forget()
            if rows:
                logger.warning("audit log: stored %d rows a stopped webhost had not written yet", len(rows))

    # -- writing ---------------------------------------------------------------------------------

    async def record(
        self,
        kind: str,
        *,
        person: Person | None = None,
        session: str | None = None,
        server: str | None = None,
        frame: str | None = None,
        decision: str | None = None,
        summary: str = "",
        detail: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one row (or count it against a spent budget) and wait until it is stored; raise
        AuditUnavailable if it cannot be."""
        if not self._running or self._closing:
            raise AuditUnavailable("the audit log is unavailable (it is not open); the action was refused")
        entry, job = self._add(kind, person, session, server, frame, decision, summary, detail, wait=True)
        if job is None:
            return entry
        await self._wait(job)
        return {**entry, "id": job.row_id}

    def note(
        self,
        kind: str,
        *,
        person: Person | None = None,
        session: str | None = None,
        server: str | None = None,
        frame: str | None = None,
        decision: str | None = None,
        summary: str = "",
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append one row without waiting for it (what it records has happened): a failure is logged."""
        if self._stopped.is_set():
            logger.error("the audit log is closed: %s not recorded", kind)
            return
        self._add(kind, person, session, server, frame, decision, summary, detail, wait=False)

    def _add(
        self,
        kind: str,
        person: Person | None,
        session: str | None,
        server: str | None,
        frame: str | None,
        decision: str | None,
        summary: str,
        detail: dict[str, Any] | None,
        *,
        wait: bool,
    ) -> tuple[dict[str, Any], _Job | None]:
        row: dict[str, Any] = {
            "ts": self._wall_clock(),
            "session": label(session),
            "server": label(server),
            "frame": label(frame),
            "kind": label(kind) or "?",
            "decision": label(decision),
            "summary": storable(str(summary)[:MAX_SUMMARY]),
            "detail": None,
            "user_id": label(person.id) if person else None,
            "user_name": label(person.name) if person else None,
        }
        fixed = sum(utf8_length(v) for v in row.values() if isinstance(v, str)) + 64
        if detail is not None:
            row["detail"] = fit_detail(detail, max(self.limits.max_row_bytes - fixed, 256))
        size = fixed + len(row["detail"] or "")
        now = self._clock()
        job = None
        if self._budgets.admit(row, size, now):
            self._flush_drops(keys=self._budgets.keys(row))
            job = self._enqueue("row", row, wait=wait)
        if now >= self._next_maintenance:
            self._maintain(now)
        entry = {"id": None, **row, "detail": read_detail(row["detail"])}
        return (entry if job is not None else {**entry, "rateLimited": True}), job

    def _enqueue(
        self, kind: Literal["row", "prune", "permission", "barrier"], args: dict[str, Any], *, wait: bool
    ) -> _Job:
        job = _Job(kind, args, anyio.Event() if wait else None)
        if not wait and kind == "row" and self._spool is not None:
            job.seq = self._spool.add(args)  # before `note` returns: a SIGKILL from now on does not lose it
        self._queue.append(job)
        self._wake.set()
        return job

    async def _wait(self, job: _Job) -> None:
        assert job.done is not None
        await job.done.wait()
        if job.error is not None:
            raise job.error

    async def flushed(self) -> None:
        """Wait until every write queued so far has been tried (stored, or failed)."""
        if self._running and not self._stopped.is_set():
            job = self._enqueue("barrier", {}, wait=True)
            assert job.done is not None
            await job.done.wait()

    def _flush_drops(self, *, keys: list[tuple[str, str]] | None = None, force: bool = False) -> None:
        """Queue the "rate limited" rows the budgets owe now (`Budgets.drops` says when)."""
        for row in self._budgets.drops(keys=keys, force=force):
            self._enqueue("row", row, wait=False)

    def _maintain(self, now: float) -> None:
        self._next_maintenance = now + MAINTENANCE_SECONDS
        self._flush_drops()
        self._enqueue("prune", self._prune_args(), wait=False)
        self._budgets.forget_full()

    async def apply_retention(self) -> None:
        """Delete rows older than `retention_days` and beyond the newest `max_rows` (cheap: both use an index)."""
        if not self._running:
            raise AuditUnavailable("the audit log is unavailable (it is not open)")
        await self._wait(self._enqueue("prune", self._prune_args(), wait=True))

    def _prune_args(self) -> dict[str, Any]:
        limits = self.limits
        cutoff = None if limits.retention_days is None else self._wall_clock() - limits.retention_days * 86400
        return {"before_ts": cutoff, "max_rows": limits.max_rows}

    # -- reading ---------------------------------------------------------------------------------

    async def entries(
        self, *, server: str | None = None, user: str | None = None, limit: int = 500, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest rows first; `user` keeps only that person's rows (by id)."""
        await self.flushed()
        try:
            rows = await self._reader.entries(server=server, user=user, limit=max(1, min(limit, 10_000)), before=before)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]
            raise AuditUnavailable(f"the audit log cannot be read: {reason}", {"reason": reason}) from None
        mask = self.mask(user)
        result = []
        for row in rows:
            entry = {column: cell(row[column]) for column in COLUMNS}
            entry["detail"] = read_detail(entry["detail"])
            if mask:  # what apps and servers wrote; never the names (server, kind, person)
                entry["summary"], entry["detail"] = mask.value(entry["summary"]), mask.value(entry["detail"])
            result.append(entry)
        return result

    async def export_csv(self, *, server: str | None = None, user: str | None = None) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(COLUMNS)
        for entry in reversed(await self.entries(server=server, user=user, limit=10_000)):
            writer.writerow([csv_safe(json.dumps(entry[c]) if c == "detail" else entry[c]) for c in COLUMNS])
        return buffer.getvalue()

    # Permissions a person granted to a server's apps, remembered across their sessions (each person's own).

    async def granted_permissions(self, person_id: str, server: str) -> set[str]:
        await self.flushed()
        try:
            return await self._reader.granted(person_id, server)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise AuditUnavailable(f"the audit log cannot be read: {exc}", {"reason": str(exc)}) from None

    async def set_permission(self, person_id: str, server: str, permission: str, granted: bool) -> None:
        if not self._running or self._closing:
            raise AuditUnavailable("the audit log is unavailable (it is not open)")
        args = {
            "person_id": person_id,
            "server": server,
            "permission": permission,
            "granted": granted,
            "ts": self._wall_clock(),
        }
        await self._wait(self._enqueue("permission", args, wait=True))


@asynccontextmanager
async def open_audit_log(
    storage: Storage,
    limits: AuditLimits | None = None,
    *,
    legacy_file: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
) -> AsyncIterator[AuditLog]:
    """An audit log with its writer running, for as long as the block lasts (closed after it)."""
    async with anyio.create_task_group() as task_group:
        log = AuditLog(storage, limits, legacy_file=legacy_file, clock=clock, wall_clock=wall_clock)
        await log.start(task_group)
        try:
            yield log
        finally:
            await log.close()
